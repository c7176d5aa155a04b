Feature: Attacks on the policy's paths and tools
  Paths are compared resolved — symlinks of parents included, also for files that do not
  exist yet — and with the file system's case rule; a tool nobody offers is reported, not
  run (local-agent-host.md §8.2, §8.3, §7.2, §11).

  @REQ-POL-014
  Scenario: a case variant of a blocked folder reveals nothing
    Given the policy allows File.Read under "." and blocks "secrets/"
    And the workspace file "secrets/key.txt" contains "s3cr3t-value"
    And a running session
    And the model will call ReadFile on "SECRETS/key.txt"
    And the model will then answer "Nothing to see."
    When the client starts the task "What is in SECRETS/key.txt?"
    Then the ReadFile call is denied where the file system ignores case, and finds no file where it does not
    And no model request contains "s3cr3t-value"

  @REQ-POL-014
  Scenario: paths compare with the file system's case rule
    Given the policy allows File.Read under "." and blocks "secrets/"
    And the workspace file "Secrets/readme.txt" contains "public notes"
    And a running session
    And the model will call ReadFile on "Secrets/readme.txt"
    And the model will then answer "Done."
    When the client starts the task "What is in Secrets/readme.txt?"
    Then the ReadFile call returns "public notes" where the file system tells case apart, and is denied where it does not

  @REQ-POL-015
  Scenario: a new file under a symlinked parent that points into a blocked folder is denied
    Given the policy allows File.Write under "." but blocks ".git/"
    And the workspace folder ".git" exists
    And the workspace symlink "hooks" points to ".git"
    And a running session
    And the model will write "pwned" into the workspace file "hooks/pwned"
    And the model will then answer "I may not write there."
    When the client starts the task "Write hooks/pwned."
    Then the WriteFile call is denied
    And the workspace has no file ".git/pwned"

  @REQ-POL-015
  Scenario: a new file under a symlinked parent that points out of the workspace is denied
    Given the policy allows File.Write under "." but blocks ".git/"
    And the workspace symlink "out" points to ".."
    And a running session
    And the model will write "pwned" into the workspace file "out/pwned"
    And the model will then answer "I may not write there."
    When the client starts the task "Write out/pwned."
    Then the WriteFile call is denied
    And the workspace has no file "../pwned"

  @REQ-POL-016
  Scenario: a call to a tool nobody offers fails with TOOL_NOT_FOUND and the task goes on
    Given a running session
    And the model will call the unknown tool "LaunchMissiles"
    And the model will then answer "That tool does not exist."
    When the client starts the task "Launch."
    Then the call to the unknown tool fails with error code "TOOL_NOT_FOUND" and the model is told
    And the task_completed result is "That tool does not exist."
