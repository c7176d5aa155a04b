Feature: Cancelling a task
  Cancellation is cooperative, except for the model's stream, which is aborted: what was
  streamed is thrown away and never enters the thread. A cancelled task ends with exactly one
  task_cancelled and the session lives on (local-agent-host.md §3.4, §4.5; INTEROP.md §1).

  @REQ-CAN-001
  Scenario: CancelTask is answered at once with the task and status cancelling
    Given a running session
    And the model will wait before answering
    And the client has started the task "Take your time."
    When the client cancels the task once the model has received its request
    Then the cancellation is acknowledged as cancelling the task

  @REQ-CAN-002 @REQ-CAN-003
  Scenario: a task cancelled while the model is silent ends without waiting for the model
    Given the runtime is started with AGENT_RUNTIME_LLM_IDLE_TIMEOUT_SECONDS set to "60"
    And a running session
    And the model will wait before answering
    And the client has started the task "Take your time."
    When the client cancels the task once the model has received its request
    Then the task ends with task_cancelled as its only terminal event

  @REQ-CAN-002 @REQ-CAN-003
  Scenario: a task cancelled in the middle of the model's answer ends without waiting for the rest
    Given the runtime is started with AGENT_RUNTIME_LLM_IDLE_TIMEOUT_SECONDS set to "60"
    And a running session
    And the model will begin answering "Let me think about that for a moment." and then pause
    And the client has started the task "Think it over."
    When the model has begun streaming its answer
    And the client cancels the task
    Then the task ends with task_cancelled as its only terminal event

  @REQ-CAN-005
  Scenario: text streamed before the cancellation is declared discarded
    Given a running session
    And the model will begin answering "Let me think about that for a moment." and then pause
    And the client has started the task "Think it over."
    When the model has begun streaming its answer
    And the client cancels the task
    Then the runtime reports llm_response_discarded before task_cancelled

  @REQ-CAN-004
  Scenario: text streamed before the cancellation never reaches the thread
    Given a running session
    And the model will begin answering "Let me think about that for a moment." and then pause
    And the model will then answer "Here is a fresh answer."
    And the client has started the task "Think it over."
    When the model has begun streaming its answer
    And the client cancels the task
    And the task finishes
    And the client starts another task "Try again, briefly."
    And the task finishes
    Then no model request of the new task contains the text streamed before the cancellation

  @REQ-CAN-006
  Scenario: the session lives on after a cancellation and runs the next task
    Given a running session
    And the model will wait before answering
    And the model will then answer "Here is a fresh answer."
    And the client has started the task "Take your time."
    When the client cancels the task once the model has received its request
    And the task finishes
    And the client asks for the session state
    Then the session state reports the session as SESSION_RUNNING
    And the session state shows the task as IDLE

  @REQ-CAN-006
  Scenario: the next task after a cancellation completes
    Given a running session
    And the model will wait before answering
    And the model will then answer "Here is a fresh answer."
    And the client has started the task "Take your time."
    When the client cancels the task once the model has received its request
    And the task finishes
    And the client starts another task "Try again, briefly."
    Then the task ends with exactly one task_completed event

  @REQ-CAN-007
  Scenario: Shutdown during a running task cancels it and ends the session cancelled
    Given a running session
    And the model will begin answering "Let me think about that for a moment." and then pause
    And the client has started the task "Think it over."
    When the model has begun streaming its answer
    And the client sends Shutdown without params
    Then the runtime answers Shutdown with a success result
    And the runtime reports task_cancelled and then session_cancelled
    And the runtime exits with code 0
