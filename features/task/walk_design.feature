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

  @REQ-LLM-100
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

  @REQ-EXT-300
  Scenario: the Backend Tool Service receives a whole ToolRequest naming the session, the task and the step
    Given the Backend Tool Service runs the tool "Translate" answering "bonjour" and the policy allows only it
    And a running session
    And the model will call the tool "Translate" with the arguments '{"text": "hello"}'
    And the model will then answer "It is bonjour."
    When the client starts the task "Translate hello."
    Then the runtime reports tool_completed for "Translate" with a result containing "bonjour"
    And the Backend Tool Service received a ToolRequest naming the session, the task and the step

  @REQ-POL-300
  Scenario: a task continued after a pause keeps its approvalMode
    Given the runtime is started with LLM_MAX_RETRIES set to "1"
    And the workspace file "notes.txt" contains "The launch code is 4-8-15-16."
    And a running session
    And the LLM Gateway answers 503 to the next 2 requests
    And the model will call ReadFile on "notes.txt"
    And the model will then answer "Done."
    When the client starts the task "Read notes.txt." with the task options '{"approvalMode": "always"}'
    Then the task fails recoverably with error code "LLM_UNAVAILABLE"
    When the client resumes the session
    And the client continues the incomplete task
    Then the runtime asks for approval titled "Allow ReadFile?" to read "notes.txt"

  @REQ-POL-300
  Scenario: a task continued after a pause keeps allowNetwork false
    Given the runtime is started with LLM_MAX_RETRIES set to "1"
    And the policy lets HttpRequest reach "example.com" but never "", after approval
    And a running session
    And the LLM Gateway answers 503 to the next 2 requests
    And the model will fetch "https://example.com/"
    And the model will then answer "No network."
    When the client starts the task "Fetch it." with the task options '{"allowNetwork": false}'
    Then the task fails recoverably with error code "LLM_UNAVAILABLE"
    When the client resumes the session
    And the client continues the incomplete task
    Then the HttpRequest call is denied
    And the runtime asks for no approval

  @REQ-POL-300
  Scenario: a task continued after a crash keeps its approvalMode
    Given the workspace file "notes.txt" contains "The launch code is 4-8-15-16."
    And a running session
    And the model will begin answering "Let me look." and then pause
    And the model will call ReadFile on "notes.txt"
    And the model will then answer "Done."
    When the client starts the task "Read notes.txt." with the task options '{"approvalMode": "always"}'
    And the model has begun streaming its answer
    And the runtime process is killed
    And the client resumes the session
    And the client continues the incomplete task
    Then the runtime asks for approval titled "Allow ReadFile?" to read "notes.txt"

  @REQ-TASK-300
  Scenario: the session_history uploaded at Shutdown names the session's last task
    Given a running session
    And the model will answer "First answer."
    When the client starts the task "First question."
    Then the task ends with exactly one task_completed event
    When the client sends Shutdown without params
    Then the runtime exits with code 0
    And the Workspace Service receives a session_history upload made after Shutdown
    And every session_history upload names the task it follows and when it was taken
