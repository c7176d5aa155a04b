Feature: RunCommand
  A command line runs in the platform shell, in the workspace root unless told otherwise; the
  answer shows the exit code and stdout and stderr apart; a command past its timeout is ended
  with every process it started; long output is cut in the middle and kept whole as an
  artifact (local-tool-runtime.md §4.4, §6.2, §7.1, §7.2). The commands here are POSIX shell.

  Background:
    Given the policy also grants Shell.Exec

  @REQ-TOOL-011
  Scenario: stdout and stderr come back in their own sections with the exit code
    Given a running session
    And the model will call RunCommand with:
      """
      {"command": "echo to-stdout; echo to-stderr >&2",
       "command@windows": "echo to-stdout& echo to-stderr>&2"}
      """
    And the model will then answer "Done."
    When the client starts the task "Run the command."
    Then the tool call result is exactly:
      """
      Exit code: 0
      --- stdout ---
      to-stdout
      --- stderr ---
      to-stderr
      """

  @REQ-TOOL-012
  Scenario: a non-zero exit code is reported, not hidden
    Given a running session
    And the model will call RunCommand with:
      """
      {"command": "echo partial; exit 3", "command@windows": "echo partial& exit 3"}
      """
    And the model will then answer "The command failed with code 3."
    When the client starts the task "Run the failing command."
    Then the tool call succeeds with a result containing "Exit code: 3"
    And the tool call succeeds with a result containing "partial"

  @REQ-TOOL-013
  Scenario: a command runs in the workspace root and reads its stdin
    Given a running session
    And the model will call RunCommand with:
      """
      {"command": "pwd; cat", "command@windows": "cd& set /p LINE=& call echo %LINE%",
       "stdin": "from-stdin\n"}
      """
    And the model will then answer "Done."
    When the client starts the task "Where am I?"
    Then the tool call succeeds with a result containing "--- stdout ---\n${WORKSPACE}\nfrom-stdin"

  @REQ-TOOL-014
  Scenario: a command past its timeout is ended with every process it started
    Given a running session
    And the model will call RunCommand with:
      """
      {"command": "echo $$ > pids; sleep 30 & echo $! >> pids; wait", "timeout": 1,
       "command@windows": "ping -n 30 127.0.0.1"}
      """
    And the model will then answer "The command took too long."
    When the client starts the task "Run the slow command."
    Then the tool call fails with errorCode "TOOL_EXECUTION_TIMEOUT" and a message containing "timed out after 1 seconds"
    And the processes listed in the workspace file "pids" are no longer running
    And the next model request answers the call with a tool message naming "TOOL_EXECUTION_TIMEOUT"

  @REQ-TOOL-015
  Scenario: output over maxOutputBytes keeps its head and tail around the marker
    Given the policy grants Shell.Exec with at most 1000 output bytes
    And a running session
    And the model will call RunCommand with:
      """
      {"command": "seq 1 3000", "command@windows": "for /L %i in (1,1,3000) do @echo %i"}
      """
    And the model will then answer "That is a lot of numbers."
    When the client starts the task "Count to 3000."
    Then the stdout section is cut to 1000 bytes: its first 80% and its last 20% around the truncation marker
    And the tool call succeeds with a result containing "1\n2\n3\n"
    And the tool call succeeds with a result containing "2999\n3000\n"

  @REQ-TOOL-016
  Scenario: stdout over 10 KB is uploaded whole as a tool_output artifact
    Given a running session
    And the model will call RunCommand with:
      """
      {"command": "seq 1 3000", "command@windows": "for /L %i in (1,1,3000) do @echo %i"}
      """
    And the model will then answer "That is a lot of numbers."
    When the client starts the task "Count to 3000."
    Then the Workspace Service receives a tool_output artifact of the tool call containing "1499\n1500\n1501\n"
