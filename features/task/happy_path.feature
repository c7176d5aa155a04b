Feature: A task that reads a file and answers
  The user asks about a file; the model reads it with ReadFile and answers. The desktop app
  sees the task acknowledged at once, follows it through events, and the conversation ends up
  in the Workspace Service (local-agent-host.md §4, §12; INTEROP.md §1, §2, §4).

  Background:
    Given the workspace file "notes.txt" contains "The launch code is 4-8-15-16."
    And a running session
    And the model will call ReadFile on "notes.txt"
    And the model will then answer "According to notes.txt the launch code is 4-8-15-16."

  @REQ-TASK-001
  Scenario: StartTask is acknowledged at once while the task runs in the background
    When the client starts the task "What is the launch code in notes.txt?"
    Then the task is acknowledged as running

  @REQ-TASK-002
  Scenario: the task begins with task_started carrying the prompt
    When the client starts the task "What is the launch code in notes.txt?"
    And the task finishes
    Then the runtime reports task_started with the prompt

  @REQ-TASK-003
  Scenario: the streamed answer arrives as text_chunk events
    When the client starts the task "What is the launch code in notes.txt?"
    And the task finishes
    Then the text_chunk events of the task spell "According to notes.txt the launch code is 4-8-15-16."

  @REQ-TASK-004
  Scenario: the ReadFile call is announced with tool_requested
    When the client starts the task "What is the launch code in notes.txt?"
    And the task finishes
    Then the runtime reports tool_requested for ReadFile on "notes.txt"

  @REQ-TASK-005
  Scenario: the ReadFile result is reported with tool_completed
    When the client starts the task "What is the launch code in notes.txt?"
    And the task finishes
    Then the runtime reports tool_completed for ReadFile with a result containing "The launch code is 4-8-15-16."

  @REQ-TASK-006
  Scenario: the model receives the file's content as the tool result
    When the client starts the task "What is the launch code in notes.txt?"
    And the task finishes
    Then the second model request carries "The launch code is 4-8-15-16." as the result of the ReadFile call

  @REQ-TASK-007
  Scenario: the model's tool call is replayed before its result
    When the client starts the task "What is the launch code in notes.txt?"
    And the task finishes
    Then the second model request replays the ReadFile call before its result

  @REQ-TASK-008
  Scenario: a text-only answer completes the task exactly once
    When the client starts the task "What is the launch code in notes.txt?"
    Then the task ends with exactly one task_completed event

  @REQ-TASK-009
  Scenario: the conversation is uploaded as the session history
    When the client starts the task "What is the launch code in notes.txt?"
    Then the Workspace Service receives a session_history holding the prompt and the answer "According to notes.txt the launch code is 4-8-15-16."

  @REQ-TASK-010
  Scenario: the model is called as a streaming chat completion on the gateway
    When the client starts the task "What is the launch code in notes.txt?"
    And the task finishes
    Then every model request is a streaming chat completion with the bearer token and the policy's model

  @REQ-TASK-011
  Scenario: model requests carry the ID chain in headers
    When the client starts the task "What is the launch code in notes.txt?"
    And the task finishes
    Then every model request names the session, the task and the step in its headers

  @REQ-TASK-013
  Scenario: every model call is reported before and after
    When the client starts the task "What is the launch code in notes.txt?"
    And the task finishes
    Then every model call is reported by llm_request_started and llm_request_completed

  @REQ-TASK-014
  Scenario: every step begins with step_started
    When the client starts the task "What is the launch code in notes.txt?"
    And the task finishes
    Then every step begins with step_started

  @REQ-TASK-012
  Scenario: GetSessionState no longer reports the task running once it has ended
    When the client starts the task "What is the launch code in notes.txt?"
    And the task finishes
    And the client asks for the session state
    Then the session state shows the task is no longer running
    And the session state reports the session as SESSION_RUNNING
