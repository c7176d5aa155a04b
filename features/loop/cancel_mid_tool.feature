Feature: Cancelling a task while a tool runs
  Cancellation is cooperative: a tool already running is waited for, its result enters the
  thread, and only then does the task end with exactly one task_cancelled. A tool still
  running a grace period after CancelTask is force-cancelled: its process tree is killed, the
  thread records that it was stopped, and a warning says so (local-agent-host.md §4.5). The
  commands are POSIX shell; they signal the kit through files in the workspace, and each wait
  is bounded (30 s) so no command outlives a failed scenario for long.

  Background:
    Given the policy also grants Shell.Exec

  @REQ-LOOP-027
  Scenario: GetSessionState reports EXECUTING_TOOLS while a tool runs
    Given a running session
    And the model will call RunCommand with:
      """
      {"command": "touch started; for i in $(seq 600); do [ -e release ] && break; sleep 0.05; done; echo finished",
       "command@windows": "type nul > started& (for /L %i in (1,1,30) do @if not exist release ping -n 2 127.0.0.1 >nul)& echo finished"}
      """
    And the model will then answer "Done."
    And the client has started the task "Run the command."
    When the command has written the workspace file "started"
    And the client asks for the session state
    Then the session state shows the task as EXECUTING_TOOLS
    When the user creates the workspace file "release"
    Then the task ends with exactly one task_completed event

  @REQ-LOOP-027
  Scenario: GetSessionState reports EXECUTING_TOOLS while an approved tool runs
    # The state leaves WAITING_FOR_APPROVAL once the last decision of the step is in.
    Given the policy requires approval for Shell.Exec under the rule "Run a command"
    And a running session
    And the model will call RunCommand with:
      """
      {"command": "touch started; for i in $(seq 600); do [ -e release ] && break; sleep 0.05; done; echo finished",
       "command@windows": "type nul > started& (for /L %i in (1,1,30) do @if not exist release ping -n 2 127.0.0.1 >nul)& echo finished"}
      """
    And the model will then answer "Done."
    And the client has started the task "Run the command."
    When the runtime asks for approval
    And the user approves the action
    And the command has written the workspace file "started"
    And the client asks for the session state
    Then the session state shows the task as EXECUTING_TOOLS
    When the user creates the workspace file "release"
    Then the task ends with exactly one task_completed event

  @REQ-CAN-008 @REQ-CAN-003
  Scenario: a task cancelled while a tool runs waits for the tool, then ends cancelled
    Given a running session
    And the model will call RunCommand with:
      """
      {"command": "touch started; for i in $(seq 600); do [ -e release ] && break; sleep 0.05; done; echo finished",
       "command@windows": "type nul > started& (for /L %i in (1,1,30) do @if not exist release ping -n 2 127.0.0.1 >nul)& echo finished"}
      """
    And the client has started the task "Run the command."
    When the command has written the workspace file "started"
    And the client cancels the task
    # judges @REQ-CAN-008
    Then the task has not ended yet
    When the user creates the workspace file "release"
    # judges @REQ-CAN-008
    Then the tool call completes with status "succeeded" before task_cancelled
    # judges @REQ-CAN-003
    And the task ends with task_cancelled as its only terminal event

  @REQ-CAN-006 @REQ-CAN-008
  Scenario: after a cancellation mid-tool, the next task runs and sees the tool's output
    # The output (finished-42) differs from the command line, which the thread also carries.
    Given a running session
    And the model will call RunCommand with:
      """
      {"command": "touch started; for i in $(seq 600); do [ -e release ] && break; sleep 0.05; done; echo finished-$((40 + 2))",
       "command@windows": "type nul > started& (for /L %i in (1,1,30) do @if not exist release ping -n 2 127.0.0.1 >nul)& set /a N=40+2 >nul& call echo finished-%N%"}
      """
    And the model will then answer "It printed what it prints."
    And the client has started the task "Run the command."
    When the command has written the workspace file "started"
    And the client cancels the task
    And the user creates the workspace file "release"
    And the task finishes
    And the client starts another task "What did it print?"
    # judges @REQ-CAN-006
    Then the task ends with exactly one task_completed event
    # judges @REQ-CAN-006
    And the last model request contains "finished-42"

  @REQ-CAN-009
  Scenario: a tool still running after the grace period is force-cancelled with its processes
    Given the runtime is started with AGENT_RUNTIME_FORCE_CANCEL_GRACE_SECONDS set to "0.2"
    And a running session
    And the model will call RunCommand with:
      """
      {"command": "echo $$ > p; sleep 30 & echo $! >> p; mv p pids; wait", "timeout": 60,
       "command@windows": "type nul > pids& ping -n 30 127.0.0.1"}
      """
    And the model will then answer "The command was stopped."
    And the client has started the task "Run the endless command."
    When the command has written the workspace file "pids"
    And the client cancels the task
    Then the task ends with task_cancelled as its only terminal event
    And the processes listed in the workspace file "pids" are no longer running
    And a warning between the cancellation and task_cancelled says the tool was stopped
    When the client starts another task "What happened to the command?"
    Then the next task's first model request answers the stopped call with "cancelled"
