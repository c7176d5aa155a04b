Feature: The history uploaded at Shutdown of a restored session
  The session_history snapshot names the task it follows (system-design.md §8a); the upload
  at Shutdown names the session's last task, also when that task ran in the process that
  crashed and the restored one ran none.

  @REQ-TASK-300
  Scenario: the history uploaded at Shutdown of a restored session follows the task that ran before the crash
    Given a running session
    And the model will answer "Hello."
    When the client starts the task "Say hello."
    Then the task_completed result is "Hello."
    When the runtime process is killed
    And the client resumes the session
    And the client sends Shutdown without params
    Then the session_history uploaded after Shutdown follows the task that ran before the crash

  @REQ-SES-014
  Scenario: the history uploaded at Shutdown of a session in which no task ran is still a valid snapshot
    Given a running session
    When the client sends Shutdown without params
    Then the runtime exits with code 0
    And the Workspace Service receives a session_history upload made after Shutdown

  @REQ-TASK-300
  Scenario: a session that continues a past conversation and runs no task uploads at Shutdown a history that follows the conversation's last task
    Given a running session
    And the model will answer "Noted: 42."
    And the client has run the task "Remember 42." to its end
    And the client has shut the session down
    When the client creates a session continuing the previous one
    And the client sends Shutdown without params
    Then the session_history uploaded after Shutdown follows the conversation's last task
