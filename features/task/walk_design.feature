Feature: Task statements of system-design.md
  Statements of system-design.md §7, §8a and §10 found by its line-by-line walk
  (features/walk/system-design.toml): the WAITING_FOR_APPROVAL state, the model's output
  limit from llmPolicy, and the fields of each session_history snapshot.

  @REQ-LOOP-300
  Scenario: while the user decides, the task is WAITING_FOR_APPROVAL
    Given the policy requires approval for File.Read under the rule "Read a local file"
    And the workspace file "notes.txt" contains "The launch code is 4-8-15-16."
    And a running session
    And the model will call ReadFile on "notes.txt"
    And the model will then answer "Done."
    When the client starts the task "What is the launch code in notes.txt?"
    And the runtime asks for approval
    And the client asks for the session state
    Then the session state shows the task as WAITING_FOR_APPROVAL
    When the user approves the action
    Then the task ends with exactly one task_completed event

  @REQ-LLM-300
  Scenario: every model request asks for at most llmPolicy.maxOutputTokens
    Given the policy limits answers to 1234 output tokens
    And a running session
    And the model will answer "Hello."
    When the client starts the task "Say hello."
    Then the task ends with exactly one task_completed event
    And every model request asks for at most 1234 output tokens

  @REQ-TASK-300
  Scenario: each session_history snapshot follows its task and holds the whole session
    Given a running session
    And the model will answer "First answer."
    And the model will then answer "Second answer."
    When the client starts the task "First question."
    Then the task ends with exactly one task_completed event
    When the client starts another task "Second question."
    Then the task ends with exactly one task_completed event
    And the session history saved last holds "First question.", "First answer.", "Second question.", "Second answer." in order
    And every session_history upload names the task it follows and when it was taken
