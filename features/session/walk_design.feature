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
