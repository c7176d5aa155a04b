Feature: Backend faults in the loop
  Calls to the Session and Workspace Services are retried a bounded number of times
  (AGENT_RUNTIME_SERVICE_RETRIES, after the first attempt). A session that cannot be created
  fails readably; a history that cannot be uploaded is reported by a warning, the session goes
  on, and the next upload carries the whole thread (local-agent-host.md §11).

  @REQ-SES-020
  Scenario Outline: CreateSession tries the failing Session Service <attempts> times, then fails readably
    Given the runtime is started with AGENT_RUNTIME_SERVICE_RETRIES set to "<retries>"
    And the Session Service answers 503 to every request
    When the client creates a session
    Then the request fails with error code "SERVICE_UNAVAILABLE"
    And the error message is a readable sentence
    And the Session Service received exactly <attempts> session creation requests

    Examples:
      | retries | attempts |
      | 0       | 1        |
      | 2       | 3        |

  @REQ-LOOP-029
  Scenario: a failed history upload is retried, warned about, and made good by the next one
    Given the runtime is started with AGENT_RUNTIME_SERVICE_RETRIES set to "1"
    And a running session
    And the Workspace Service answers 503 to the next 2 requests
    And the model will answer "First answer."
    And the model will then answer "Second answer."
    When the client starts the task "First question."
    Then a warning with code "WORKSPACE_UPLOAD_FAILED" precedes task_completed
    And the Workspace Service received 2 session_history upload attempts
    When the client starts another task "Second question."
    Then the task ends with exactly one task_completed event
    And the session history saved last holds "First question.", "First answer.", "Second question.", "Second answer." in order
