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
