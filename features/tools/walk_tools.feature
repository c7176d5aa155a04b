Feature: Tool runtime statements catalogued by the spec walk
  Statements of local-tool-runtime.md found by walking it line by line that no earlier
  scenario certified: the tools' descriptions (§5), the default output budget (§4.4, §7.1),
  DeleteFile's answer (§4.3), the shell's environment and process-tree kill (§6.2), and the
  tool runtime's own path checks (§6.1, §8.1). Commands here are POSIX shell.

  @REQ-TOOL-200
  Scenario Outline: every built-in tool is offered with the description the spec gives it
    Given the policy also grants File.Delete
    And the policy also grants Shell.Exec
    And the policy also grants Network.Http
    And a running session
    And the model will answer "Hello."
    When the client starts the task "Which tools do you have?"
    Then the model is offered <tool> described as "<description>"

    Examples:
      | tool        | description                                                      |
      | ReadFile    | Read the contents of a file at the given path                    |
      | WriteFile   | Create or overwrite a file with the given content                |
      | DeleteFile  | Delete a file at the given path                                  |
      | RunCommand  | Execute a shell command and return stdout, stderr, and exit code |
      | HttpRequest | Make an HTTP request and return the response                     |

  @REQ-TOOL-208
  Scenario Outline: every built-in tool can be called with the arguments the spec requires
    Given the policy also grants File.Delete
    And the policy also grants Shell.Exec
    And the policy also grants Network.Http
    And a running session
    And the model will answer "Hello."
    When the client starts the task "Which tools do you have?"
    Then the model is offered <tool> requiring no argument but "<required>"

    Examples:
      | tool        | required      |
      | ReadFile    | path          |
      | WriteFile   | path, content |
      | DeleteFile  | path          |
      | RunCommand  | command       |
      | HttpRequest | url           |

  @REQ-TOOL-201
  Scenario: without maxOutputBytes in the policy, command output is cut at 100 KB
    Given the policy also grants Shell.Exec
    And a running session
    And the model will call RunCommand with:
      """
      {"command": "seq 1 40000", "command@windows": "for /L %i in (1,1,2500) do @echo %i ................................................................"}
      """
    And the model will then answer "That is a lot of numbers."
    When the client starts the task "Count to 40000."
    Then the stdout section is cut to 102400 bytes: its first 80% and its last 20% around the truncation marker

  @REQ-TOOL-202
  Scenario: DeleteFile answers "Deleted PATH"
    Given the workspace file "old.txt" contains "obsolete"
    And the policy also grants File.Delete
    And a running session
    And the model will call DeleteFile with:
      """
      {"path": "${WORKSPACE}/old.txt"}
      """
    And the model will then answer "Deleted."
    When the client starts the task "Delete old.txt."
    Then the tool call succeeds with a result containing "Deleted ${WORKSPACE}/old.txt"
    And the workspace has no file "old.txt"

  @REQ-TOOL-203
  Scenario: a command inherits the environment the runtime was started with
    Given the runtime is started with WALK_INHERITED_MARKER set to "inherited-from-the-runtime"
    And the policy also grants Shell.Exec
    And a running session
    And the model will call RunCommand with:
      """
      {"command": "printf '%s\\n' \"$WALK_INHERITED_MARKER\"",
       "command@windows": "echo %WALK_INHERITED_MARKER%"}
      """
    And the model will then answer "Done."
    When the client starts the task "Show the marker."
    Then the tool call succeeds with a result containing "--- stdout ---\ninherited-from-the-runtime\n"

  # POSIX only: Windows has no SIGTERM to ignore (a process tree ends with TerminateProcess).
  @REQ-TOOL-204 @posix-shell
  Scenario: a command that ignores SIGTERM is still ended at its timeout, with every process it started
    Given the runtime is started with AGENT_RUNTIME_KILL_GRACE_SECONDS set to "0.5"
    And the policy also grants Shell.Exec
    And a running session
    And the model will call RunCommand with:
      """
      {"command": "trap '' TERM; echo $$ > pids; sleep 30 & echo $! >> pids; wait; wait; wait", "timeout": 1}
      """
    And the model will then answer "The command took too long."
    When the client starts the task "Run the stubborn command."
    Then the tool call fails with errorCode "TOOL_EXECUTION_TIMEOUT" and a message containing "timed out after 1 seconds"
    And the processes listed in the workspace file "pids" are no longer running

  @REQ-TOOL-205
  Scenario: a path longer than the OS allows is refused and nothing is read
    Given a running session
    And the model will call ReadFile on a path of 5000 characters in the workspace
    And the model will then answer "That path is too long."
    When the client starts the task "Read the long path."
    Then the tool call fails with errorCode "INVALID_REQUEST" and a message containing "long"

  @REQ-TOOL-206
  Scenario: ReadFile refuses a path that climbs out of the workspace even when the policy admits it
    Given the policy allows File.Read under ".." and blocks ".env"
    And the file "outside.txt" beside the workspace contains "s3cr3t-value"
    And a running session
    And the model will call ReadFile with:
      """
      {"path": "${WORKSPACE}/../outside.txt"}
      """
    And the model will then answer "That file is outside the project."
    When the client starts the task "What is in ../outside.txt?"
    Then the tool call is refused with a message containing "leave the project folder"
    And no model request contains "s3cr3t-value"

  @REQ-TOOL-206
  Scenario: WriteFile refuses a path that climbs out of the workspace even when the policy admits it
    Given the policy allows File.Write under ".." but blocks ".env"
    And a running session
    And the model will call WriteFile with:
      """
      {"path": "${WORKSPACE}/../escaped.txt", "content": "x"}
      """
    And the model will then answer "That file is outside the project."
    When the client starts the task "Write ../escaped.txt."
    Then the tool call is refused with a message containing "leave the project folder"
    And there is no file "escaped.txt" beside the workspace

  @REQ-TOOL-207
  Scenario: a path starting with ~ names a file in the home folder
    Given the policy allows File.Read under "../home" and blocks ".env"
    And the file "notes.txt" in the home folder contains "home-notes"
    And a running session
    And the model will call ReadFile with:
      """
      {"path": "~/notes.txt"}
      """
    And the model will then answer "Read it."
    When the client starts the task "Read ~/notes.txt."
    Then the tool call result is exactly:
      """
      home-notes
      """

  @REQ-POL-200
  Scenario: a ~ path is judged as the home-folder file it names, which the workspace's grant does not reach
    Given the policy allows File.Read under "." and blocks ".env"
    And the file "secret.txt" in the home folder contains "s3cr3t-home"
    And a running session
    And the model will call ReadFile with:
      """
      {"path": "~/secret.txt"}
      """
    And the model will then answer "That file is off limits."
    When the client starts the task "Read ~/secret.txt."
    Then the tool call is refused with a message containing "secret.txt"
    And no model request contains "s3cr3t-home"
