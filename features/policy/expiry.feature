Feature: A policy that expires during a task
  Expiry is checked before every LLM call and every tool call; on expiry the operation is
  denied, policy_expired is sent, the session pauses, and ResumeSession fetches a fresh
  policy after which the task can go on (local-agent-host.md §8.6, §3.3; INTEROP.md §1).

  @REQ-POL-019
  Scenario: a tool call after the policy expired is denied, the session pauses and resumes with a fresh policy
    Given the runtime is started with AGENT_RUNTIME_LLM_IDLE_TIMEOUT_SECONDS set to "10"
    And the Session Service serves policies that expire 1.5 seconds after they are served
    And the workspace file "notes.txt" contains "The launch code is 4-8-15-16."
    And a running session
    And the model will call ReadFile on "notes.txt" when released
    And the model will then answer "I read nothing; the policy expired."
    When the client starts the task "What is the launch code in notes.txt?"
    And the model has begun streaming its answer
    And the policy the session was served has expired
    And the model finishes its answer
    Then the ReadFile call is denied with error code "POLICY_EXPIRED"
    And the runtime reports policy_expired
    And the session is paused
    And the task fails recoverably with error code "POLICY_EXPIRED"
    When the client asks for the session state
    Then the session state reports the session as SESSION_PAUSED
    When the Session Service serves policies valid for an hour again
    And the client resumes the session
    Then the Session Service received a resume for the session
    And the session runs again
    When the client continues the incomplete task
    Then the continued task completes with "I read nothing; the policy expired."
    And no model request contains "4-8-15-16"

  @REQ-POL-019
  Scenario: a call approved after the policy expired is denied, not run
    # Expiry is checked again when the user's decision arrives, not only when the call is planned.
    Given the Session Service serves policies that expire 3 seconds after they are served
    And the policy requires approval for File.Read under the rule "Read a local file"
    And the workspace file "notes.txt" contains "The launch code is 4-8-15-16."
    And a running session
    And the model will call ReadFile on "notes.txt"
    And the model will then answer "I read nothing; the policy expired."
    When the client starts the task "What is the launch code in notes.txt?"
    And the runtime asks for approval
    And the policy the session was served has expired
    And the user approves the action
    Then the ReadFile call is denied with error code "POLICY_EXPIRED"
    And the task fails recoverably with error code "POLICY_EXPIRED"
    And no model request contains "4-8-15-16"
