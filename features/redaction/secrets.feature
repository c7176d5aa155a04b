Feature: Secrets never leave the runtime in clear
  The runtime's own credentials (the gateway token, service credentials in its environment)
  and secrets with a recognisable shape (API keys, tokens, JWTs, private keys, passwords)
  that a tool reads from a file or a command prints are replaced before they reach the
  model, the app, the logs, the checkpoint or the Workspace Service; a model request that
  carries redacted content says so in its `x-redaction-applied: true` header
  (local-agent-host.md §8.7 Phase 2; INTEROP.md §2). The kit looks for every
  planted secret in stdout, stderr, LOG_DIR, CHECKPOINT_DIR and every request body the fakes
  received, artifact contents decoded.

  @REQ-RED-001
  Scenario: the gateway token and a service credential printed by a file and a command stay secret
    Given the runtime is started with LLM_GATEWAY_AUTH_TOKEN set to "gw-planted-5c1e9a7f3b2d"
    And the runtime is started with DEPLOY_API_TOKEN set to "svc-planted-8d2f4b6a1c9e"
    And the policy also grants Shell.Exec
    And the workspace file "notes.txt" contains "deploy target prod uses gw-planted-5c1e9a7f3b2d"
    And a running session
    And the model will call ReadFile on "notes.txt"
    And the model will call RunCommand with:
      """
      {"command": "printenv DEPLOY_API_TOKEN LLM_GATEWAY_AUTH_TOKEN; echo visible-after-the-secrets",
       "command@windows": "echo %DEPLOY_API_TOKEN%& echo %LLM_GATEWAY_AUTH_TOKEN%& echo visible-after-the-secrets"}
      """
    And the model will then answer "Done."
    When the client starts the task "Check the deployment settings."
    Then the secret "gw-planted-5c1e9a7f3b2d" appears in none of the runtime's outputs
    And the secret "svc-planted-8d2f4b6a1c9e" appears in none of the runtime's outputs
    And the last model request contains "visible-after-the-secrets"
    And the last model request contains "deploy target prod uses"

  @REQ-RED-001
  Scenario: the gateway token in the prompt and in the model's answer stays out of the uploaded history
    # The thread keeps the answer as the model sent it; the history upload is cleaned on its way out.
    Given the runtime is started with LLM_GATEWAY_AUTH_TOKEN set to "gw-planted-7a3e1c9d5b2f"
    And a running session
    And the model will answer "Deploying with gw-planted-7a3e1c9d5b2f as you asked."
    When the client starts the task "Deploy with the token gw-planted-7a3e1c9d5b2f please."
    Then the secret "gw-planted-7a3e1c9d5b2f" appears in none of the runtime's outputs

  @REQ-RED-002 @REQ-RED-004
  Scenario Outline: <kind> in a file the model reads is redacted and the request says so
    Given the workspace file "settings.txt" contains "<line>"
    And a running session
    And the model will call ReadFile on "settings.txt"
    And the model will then answer "Done."
    When the client starts the task "Read settings.txt."
    # judges @REQ-RED-002
    Then the secret "<secret>" appears in none of the runtime's outputs
    # judges @REQ-RED-002
    And the last model request contains "<kept>"
    # judges @REQ-RED-004
    And the last model request has the header "x-redaction-applied" set to "true"
    # judges @REQ-RED-004
    And the first model request has no header "x-redaction-applied"

    Examples:
      | kind           | line                                                                 | secret                                                                 | kept                  |
      | an API key     | OPENAI_API_KEY=sk-proj-Zx9Qw8Er7Ty6Ui5Op4As                          | sk-proj-Zx9Qw8Er7Ty6Ui5Op4As                                           | OPENAI_API_KEY=       |
      | an AWS key     | aws_access_key_id = AKIAZ7Q4W2E8R6T1Y3U5                             | AKIAZ7Q4W2E8R6T1Y3U5                                                   | aws_access_key_id     |
      | a GitHub token | GITHUB_TOKEN=ghp_R8t2Y6u0I4o8P2a6S0d4F8g2H6j0K4l8Z2x6                | ghp_R8t2Y6u0I4o8P2a6S0d4F8g2H6j0K4l8Z2x6                               | GITHUB_TOKEN=         |
      | a Slack token  | slack hook xoxb-2048-4096-Kq8Wm3Nz7Rv1                               | xoxb-2048-4096-Kq8Wm3Nz7Rv1                                            | slack hook            |
      | a JWT          | session eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJjb25mb3JtYW5jZSJ9.Qm9ndXNTaWduYXR1cmU | eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJjb25mb3JtYW5jZSJ9.Qm9ndXNTaWduYXR1cmU | session               |
      | a bearer token | Authorization: Bearer q7W2e9R4t1Y6u3I8o5P0                           | q7W2e9R4t1Y6u3I8o5P0                                                   | Authorization: Bearer |
      | a password     | db password=Tr0ub4dor-and-3                                          | Tr0ub4dor-and-3                                                        | db password=          |

  @REQ-RED-002
  Scenario: a PEM private key in a file the model reads is redacted
    Given the workspace file "id_rsa" contains these lines:
      """
      -----BEGIN RSA PRIVATE KEY-----
      MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gunVTLw
      7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxKLxoS2tFc
      -----END RSA PRIVATE KEY-----
      """
    And a running session
    And the model will call ReadFile on "id_rsa"
    And the model will then answer "Done."
    When the client starts the task "Show me id_rsa."
    Then the secret "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gunVTLw" appears in none of the runtime's outputs
    And the secret "7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxKLxoS2tFc" appears in none of the runtime's outputs
    And the last model request has the header "x-redaction-applied" set to "true"

  @REQ-RED-003
  Scenario: a secret a command prints is redacted
    Given the policy also grants Shell.Exec
    And a running session
    And the model will call RunCommand with:
      """
      {"command": "printf 'key=%s%s\\n' sk-proj- Zx9Qw8Er7Ty6Ui5Op4As; echo the-command-ran",
       "command@windows": "set A=sk-proj-& call echo key=%A%Zx9Qw8Er7Ty6Ui5Op4As& echo the-command-ran"}
      """
    And the model will then answer "Done."
    When the client starts the task "Print the key."
    Then the secret "sk-proj-Zx9Qw8Er7Ty6Ui5Op4As" appears in none of the runtime's outputs
    And the last model request contains "the-command-ran"
    And the last model request has the header "x-redaction-applied" set to "true"

  @REQ-RED-005
  Scenario: a rule from the redaction rules file applies like a built-in one
    Given the runtime is started with the redaction rules file:
      """
      # project ticket ids are confidential
      ticket = \bTCK-[0-9]{6}\b
      """
    And the workspace file "todo.txt" contains "fix TCK-493817 before friday"
    And a running session
    And the model will call ReadFile on "todo.txt"
    And the model will then answer "Done."
    When the client starts the task "What is in todo.txt?"
    Then the secret "TCK-493817" appears in none of the runtime's outputs
    And the last model request contains "before friday"

  @REQ-RED-006
  Scenario: a redaction rule of the policy bundle applies to outbound prompts
    Given the policy's llmPolicy has the redaction rule "case_id" for "CASE-[0-9]{5}"
    And the workspace file "case.txt" contains "customer CASE-48213 is waiting"
    And a running session
    And the model will call ReadFile on "case.txt"
    And the model will then answer "Done."
    When the client starts the task "What is in case.txt?"
    Then the secret "CASE-48213" appears in none of the runtime's outputs
    And the last model request contains "is waiting"
    And the last model request has the header "x-redaction-applied" set to "true"

  @REQ-RED-007
  Scenario Outline: <kind> in a file the model reads is redacted by its shape
    Given the workspace file "settings.txt" contains "<line>"
    And a running session
    And the model will call ReadFile on "settings.txt"
    And the model will then answer "Done."
    When the client starts the task "Read settings.txt."
    Then the secret "<secret>" appears in none of the runtime's outputs
    And the last model request contains "<kept>"

    Examples:
      | kind                    | line                                                                          | secret                                   | kept                       |
      | an npm token            | //registry.npmjs.org/:_authToken=npm_q7Rt5Yu3Io1Pa9Sd7Fg5Hj3Kl1Zx9Cv7Bn5M    | npm_q7Rt5Yu3Io1Pa9Sd7Fg5Hj3Kl1Zx9Cv7Bn5M | registry.npmjs.org         |
      | a GitLab token          | gitlab token glpat-Qw3Er5Ty7Ui9Op1As3Df                                       | glpat-Qw3Er5Ty7Ui9Op1As3Df               | gitlab token               |
      | a Google API key        | maps key AIzaSyQw3Er5Ty7Ui9Op1As3Df5Gh7Jk9Lz1XcV                              | AIzaSyQw3Er5Ty7Ui9Op1As3Df5Gh7Jk9Lz1XcV  | maps key                   |
      | a Slack webhook         | notify https://hooks.slack.com/services/T0PLANT01/B0PLANT02/Qw3Er5Ty7Ui9Op1As  | T0PLANT01/B0PLANT02/Qw3Er5Ty7Ui9Op1As    | hooks.slack.com/services/  |
      | a Hugging Face token    | hub hf_Qw3Er5Ty7Ui9Op1As3Df5Gh7Jk9Lz1Xc3Vb                                    | hf_Qw3Er5Ty7Ui9Op1As3Df5Gh7Jk9Lz1Xc3Vb   | hub                        |
      | a netrc password        | machine api.example.com login alice password Pl4nted-netrc-pw                 | Pl4nted-netrc-pw                         | login alice password       |
      | basic authorization     | Authorization: Basic YWxpY2U6UGw0bnRlZC1iYXNpYw==                            | YWxpY2U6UGw0bnRlZC1iYXNpYw==             | Authorization: Basic       |
      | a glued sk- key         | OPENAI=VAL_sk-proj-Qw3Er5Ty7Ui9Op1As3Df5Gh7                                   | Qw3Er5Ty7Ui9Op1As3Df5Gh7                 | OPENAI=VAL_                |

  @REQ-RED-007
  Scenario: a docker config auth value in a file the model reads is redacted
    Given the workspace file "config.json" contains these lines:
      """
      {"auths": {"ghcr.io": {"auth": "YWxpY2U6UGw0bnRlZC1kb2NrZXI="}}}
      """
    And a running session
    And the model will call ReadFile on "config.json"
    And the model will then answer "Done."
    When the client starts the task "Read config.json."
    Then the secret "YWxpY2U6UGw0bnRlZC1kb2NrZXI=" appears in none of the runtime's outputs
    And the last model request contains "ghcr.io"
