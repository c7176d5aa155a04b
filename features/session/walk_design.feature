Feature: The session handshake and policy validation, as system-design.md words them
  Statements of system-design.md §6, §10 and §17 found by its line-by-line walk
  (features/walk/system-design.toml): what the handshake request carries, and that a policy
  bundle failing validation — at CreateSession or in a ResumeSession answer — is never used.

  @REQ-SES-300
  Scenario: a policy bundle that fails validation starts no session
    Given the Session Service issues a policy bundle for another session
    When the client creates a session
    Then the request fails with error code "POLICY_BUNDLE_INVALID"
    And the runtime reported no session_started
    When the client tries to start a task in the session the Session Service created
    Then the request fails with error code "SESSION_NOT_FOUND"
    And the model was never called

  @REQ-SES-301
  Scenario: a refreshed bundle that fails validation is refused when a killed session is resumed
    Given a running session
    And the runtime process is killed
    And the Session Service issues a policy bundle for another session
    When the client resumes the session
    Then the request fails with error code "POLICY_BUNDLE_INVALID"

  @REQ-SES-301
  Scenario: a refreshed bundle that has expired is refused and the paused session stays paused
    Given the runtime is started with LLM_MAX_RETRIES set to "1"
    And a running session
    And the LLM Gateway answers 503 to the next 2 requests
    And the client has run the task "Are you there?" to its end
    And the Session Service issues a policy bundle that expired an hour ago
    When the client resumes the session
    Then the request fails with error code "POLICY_BUNDLE_INVALID"
    When the client asks for the session state
    Then the session state reports the session as SESSION_PAUSED

  @REQ-SES-302
  Scenario: the handshake request names the execution environment and the runtime's tools
    When the client creates a session
    Then the Session Service was told the execution environment and the runtime's tools

  @REQ-REC-300
  Scenario: a session restored after a crash keeps its name and feature flags
    Given the Session Service turns on the feature flag "betaTools"
    And a running session
    And the runtime process is killed
    When the client resumes the session
    Then the session reports the feature flag "betaTools" turned on
    And the resumed session has the name the Session Service gave it

  @REQ-REC-301
  Scenario: a session restored after a crash keeps the system prompt the desktop app's OS gave it
    Given the workspace file "notes.txt" contains "The launch code is 4-8-15-16."
    And a running session created on "Windows"
    And the model will call ReadFile on "notes.txt"
    And the model will begin answering "The code" and then pause
    And the model will then answer "The launch code is 4-8-15-16."
    When the client starts the task "What is the launch code in notes.txt?"
    And the model has begun streaming its answer
    And the runtime process is killed
    And the client resumes the session
    And the client continues the incomplete task
    Then the continued task completes with "The launch code is 4-8-15-16."
    And every model request carries the same system prompt, naming "Windows"
