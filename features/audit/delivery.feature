Feature: Audit and telemetry delivery
  With AUDIT_SERVICE_URL and TELEMETRY_SERVICE_URL set, SessionEvents also go, in the shared
  envelope (architecture.md §6.3, system-design.md §14), to POST /audit/events and
  POST /telemetry/events. Audit receives at least approvals, high-risk tool invocations,
  policy decisions, LLM request and response metadata and session state transitions
  (system-design.md §18); delivery is fire-and-forget: network failures never halt the agent
  loop (local-agent-host.md §12).

  Background:
    Given the workspace file "notes.txt" contains "The launch code is 4-8-15-16."

  @REQ-AUD-001 @REQ-AUD-008
  Scenario: approvals reach the Audit Service in the shared envelope
    Given the policy requires approval for File.Read under the rule "Read a local file"
    And a running session
    And the model will call ReadFile on "notes.txt"
    And the model will then answer "Done."
    When the client starts the task "What is the launch code in notes.txt?"
    And the user approves the action
    # judges @REQ-AUD-001
    Then the Audit Service receives "approval_requested" for the task
    # judges @REQ-AUD-001
    And the Audit Service receives "approval_resolved" for the task
    # judges @REQ-AUD-008
    And every envelope the Audit and Telemetry Services received is valid and names this session

  @REQ-AUD-002
  Scenario: a high-risk tool invocation is audited
    Given the workspace file "old.txt" contains "obsolete"
    And the policy also grants File.Delete
    And a running session
    And the model will call DeleteFile with:
      """
      {"path": "${WORKSPACE}/old.txt"}
      """
    And the model will then answer "Deleted."
    When the client starts the task "Delete old.txt."
    Then the task_completed result is "Deleted."
    And the Audit Service receives a record of the DeleteFile call

  @REQ-AUD-003
  Scenario: a policy denial is audited
    Given the policy does not grant File.Read
    And a running session
    And the model will call ReadFile on "notes.txt"
    And the model will then answer "I may not read files here."
    When the client starts the task "What is the launch code in notes.txt?"
    Then the ReadFile call is denied with error code "CAPABILITY_DENIED"
    And the Audit Service receives the policy denial of the ReadFile call

  @REQ-AUD-004
  Scenario: LLM metadata is audited, never the conversation
    Given a running session
    And the model will call ReadFile on "notes.txt"
    And the model will then answer "The secret phrase is purple-elephant."
    When the client starts the task "What is the launch code in notes.txt?"
    Then the task_completed result is "The secret phrase is purple-elephant."
    And the Audit Service receives the LLM request metadata: model and token counts
    And no audit or telemetry envelope contains "purple-elephant"
    And no audit or telemetry envelope contains "4-8-15-16"

  @REQ-AUD-005
  Scenario: session and task state transitions are audited, the session's end included
    Given a running session
    And the model will answer "Hello."
    When the client starts the task "Say hello."
    Then the task_completed result is "Hello."
    And the Audit Service receives "session_started" for the session
    And the Audit Service receives "task_started" for the task
    And the Audit Service receives "task_completed" for the task
    When the client sends Shutdown without params
    Then the Audit Service receives "session_completed" for the session

  @REQ-AUD-006
  Scenario: telemetry receives the other SessionEvents
    Given a running session
    And the model will call ReadFile on "notes.txt"
    And the model will then answer "Done."
    When the client starts the task "What is the launch code in notes.txt?"
    Then the task_completed result is "Done."
    And the Telemetry Service receives "step_started" for the task
    And the Telemetry Service receives "tool_completed" for the task
    And every envelope the Audit and Telemetry Services received is valid and names this session

  @REQ-AUD-007
  Scenario: an Audit Service that is down neither fails nor holds up the task
    Given the Audit Service is down
    And the Telemetry Service is down
    And a running session
    And the model will call ReadFile on "notes.txt"
    And the model will then answer "Done."
    When the client starts the task "What is the launch code in notes.txt?"
    Then the ReadFile call runs and returns "The launch code is 4-8-15-16."
    And the task_completed result is "Done."

  @REQ-AUD-007
  Scenario: an Audit Service answering 500 is retried and the task goes on
    Given the Audit Service answers 500 to the next 3 requests
    And a running session
    And the model will answer "Hello."
    When the client starts the task "Say hello."
    Then the task_completed result is "Hello."
    And the Audit Service, after its failures, receives "task_completed" for the task

  @REQ-AUD-007
  Scenario: an Audit Service that hangs does not slow the task
    Given the Audit Service is slow by 10 s
    And a running session
    And the model will call ReadFile on "notes.txt"
    And the model will then answer "Done."
    When the client starts the task "What is the launch code in notes.txt?"
    Then the ReadFile call runs and returns "The launch code is 4-8-15-16."
    And the task_completed result is "Done."

  @REQ-AUD-009
  Scenario: a full delivery queue drops, counts and reports what it dropped
    Given the runtime is started with AGENT_RUNTIME_AUDIT_QUEUE_BOUND set to "1"
    And the runtime is started with AGENT_RUNTIME_AUDIT_BATCH_SIZE set to "1"
    And the Audit Service is slow by 500 ms
    And a running session
    And the model will call ReadFile on "notes.txt"
    And the model will then answer "Done."
    When the client starts the task "What is the launch code in notes.txt?"
    Then the task_completed result is "Done."
    When the Audit Service answers at once again
    Then the Audit Service is told how many events were dropped
