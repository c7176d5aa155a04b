Feature: Tearing a session down
  Shutdown ends the session cleanly: it is answered, the history is uploaded, the Session
  Service is told, and the process exits fast with code 0 (local-agent-host.md §3.4,
  INTEROP.md §1). The desktop app sends Shutdown with no params member.

  Background:
    Given a running session that has completed a task

  @REQ-SES-012 @REQ-RPC-008
  Scenario: Shutdown without params is answered with a success result
    When the client sends Shutdown without params
    Then the runtime answers Shutdown with a success result

  @REQ-SES-013
  Scenario: the process exits with code 0 after Shutdown
    When the client sends Shutdown without params
    Then the runtime exits with code 0

  @REQ-SES-014
  Scenario: Shutdown uploads the final session history
    When the client sends Shutdown without params
    Then the Workspace Service receives a session_history upload made after Shutdown

  @REQ-SES-015
  Scenario: Shutdown during a task tells the Session Service the session was cancelled
    Given the model will begin answering "Working on it" and then pause
    When the client starts the task "Take your time."
    And the model has begun streaming its answer
    And the client sends Shutdown without params
    Then the Session Service receives a cancel for the session with a reason

  @REQ-SES-016
  Scenario: Shutdown of an idle session emits session_completed
    When the client sends Shutdown without params
    Then the runtime reports session_completed for the session

  @REQ-SES-017
  Scenario: the end of stdin tears the session down like Shutdown
    When the client closes the runtime's stdin
    Then the runtime exits with code 0
