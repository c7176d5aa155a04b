Feature: Confinement against a hostile model
  What the policy grants is all a tool can reach, even when the model prepares the workspace
  against it: git runs nothing the repository names and works only on
  repositories inside the granted folders, a commit stages named files only, a push reaches
  only granted folders, an approved call is judged again when it runs, and reading a file
  never costs more memory than a bounded cap. Each is judged from outside: a marker file
  that must not appear, a folder outside that must stay untouched, the runtime's peak memory.

  @REQ-HARD-001
  Scenario: GitStatus and GitDiff run no program the repository's config names
    Given the workspace file "notes.txt" contains "first"
    And the workspace is a git repository with "notes.txt" committed
    And the workspace file "notes.txt" contains "second"
    And the workspace repository's config sets "core.fsmonitor" to a program that creates the file "fsmonitor-ran" beside the workspace
    And the workspace repository's config sets "diff.external" to a program that creates the file "external-diff-ran" beside the workspace
    And the workspace repository's config sets "core.pager" to a program that creates the file "pager-ran" beside the workspace
    And the policy also grants Git.Status
    And the policy also grants Git.Diff
    And a running session
    And the model will call these tools in one answer:
      | tool      | arguments |
      | GitStatus | {}        |
      | GitDiff   | {}        |
    And the model will then answer "Looked."
    When the client starts the task "What changed?"
    Then there is no file "fsmonitor-ran" beside the workspace
    And there is no file "external-diff-ran" beside the workspace
    And there is no file "pager-ran" beside the workspace

  @REQ-HARD-002
  Scenario: GitCommit runs no hook and no filter driver the repository names
    Given the workspace file "notes.txt" contains "first"
    And the workspace is a git repository with "notes.txt" committed
    And the workspace file "todo.txt" contains "write the docs"
    And the workspace repository has the hook "pre-commit" that creates the file "hook-ran" beside the workspace
    And the workspace repository has the hook "post-commit" that creates the file "hook-ran" beside the workspace
    And the workspace repository filters every file through a driver that creates the file "filter-ran" beside the workspace
    And the policy also grants Git.Commit
    And a running session
    And the model will call GitCommit with:
      """
      {"message": "Add the todo list", "files": ["todo.txt", ".gitattributes"]}
      """
    And the model will then answer "Committed."
    When the client starts the task "Commit todo.txt."
    Then the workspace repository's last commit is "Add the todo list" holding "todo.txt"
    And there is no file "hook-ran" beside the workspace
    And there is no file "filter-ran" beside the workspace

  @REQ-HARD-003
  Scenario: a .git file leading to a repository outside the granted folder is refused
    Given the workspace's .git is a file pointing to a repository beside the workspace that committed "secret.txt" holding "outside-secret-4711"
    And the policy also grants Git.Diff
    And a running session
    And the model will call GitDiff with:
      """
      {}
      """
    And the model will then answer "I may not look there."
    When the client starts the task "Show me the diff."
    Then the tool call fails with errorCode "PERMISSION_DENIED" and a message containing ".git"
    And no model request contains "outside-secret-4711"

  @REQ-HARD-004
  Scenario: GitCommit stages named files only, never a pattern
    Given the workspace file "notes.txt" contains "first"
    And the workspace is a git repository with "notes.txt" committed
    And the workspace file ".env" contains "API_KEY=s3cr3t"
    And the policy also grants Git.Commit
    And a running session
    And the model will call GitCommit with:
      """
      {"message": "Everything", "files": ["*"]}
      """
    And the model will then answer "I must name the files."
    When the client starts the task "Commit everything."
    Then the tool call fails with errorCode "INVALID_REQUEST" and a message containing "*"
    And the workspace repository's last commit is "Initial commit" holding "notes.txt"

  @REQ-HARD-005
  Scenario: GitPush reaches no folder outside the granted paths, whatever the remote is called
    Given the workspace file "notes.txt" contains "first"
    And the workspace is a git repository with "notes.txt" committed
    And the bare remote "stash.git" beside the workspace is the workspace repository's origin
    And the policy grants Git.Push under "." but blocks "secrets/"
    And a running session
    And the model will call GitPush with:
      """
      {"remote": "origin", "branch": "main"}
      """
    And the model will then answer "I may not push there."
    When the client starts the task "Push main."
    Then the tool call fails with errorCode "PERMISSION_DENIED" and a message containing "stash.git"
    And the bare remote "stash.git" beside the workspace has no commits

  @REQ-HARD-010
  Scenario: GitPush reaches no server off the Git.Push remote allowlist
    Given the workspace file "notes.txt" contains "first"
    And the workspace is a git repository with "notes.txt" committed
    And a TCP listener on loopback
    And the workspace repository's origin is a git server on the loopback listener
    And the policy also grants Git.Push
    And a running session
    And the model will call GitPush with:
      """
      {"remote": "origin", "branch": "main"}
      """
    And the model will then answer "I may not push there."
    When the client starts the task "Push main."
    Then the tool call fails with errorCode "PERMISSION_DENIED" and a message containing "remote allowlist"
    And the loopback listener was never connected to

  @REQ-HARD-006
  Scenario: a path swapped for a link while the approval waits is judged again
    Given the policy requires approval for File.Read scoped by '{"allowedPaths": ["."]}'
    And the workspace file "notes.txt" contains "harmless notes"
    And the file "outside.txt" beside the workspace contains "s3cr3t-value-0815"
    And a running session
    And the model will call ReadFile on "notes.txt"
    And the model will then answer "Done."
    When the client starts the task "Read notes.txt."
    And the runtime asks for approval
    And the workspace file "notes.txt" is replaced by a symlink to "../outside.txt"
    And the user approves the action
    Then no model request contains "s3cr3t-value-0815"

  @REQ-HARD-009
  Scenario: a folder swapped for a link while a write waits for approval receives nothing
    Given the policy requires approval for File.Write scoped by '{"allowedPaths": ["."]}'
    And the workspace folder "docs" exists
    And a running session
    And the model will call WriteFile with:
      """
      {"path": "docs/planted.txt", "content": "written outside"}
      """
    And the model will then answer "Done."
    When the client starts the task "Write the notes."
    And the runtime asks for approval
    And the workspace folder "docs" is replaced by a symlink to "../home"
    And the user approves the action
    Then the file "planted.txt" outside the workspace does not exist

  @REQ-HARD-007
  Scenario: a huge sparse file is called binary without being read into memory
    Given the policy grants File.Read
    And the workspace file "disk.img" is a sparse file of 512 MiB
    And a running session
    And the model will call ReadFile with:
      """
      {"path": "disk.img"}
      """
    And the model will then answer "It is binary."
    When the client starts the task "What is disk.img?"
    Then the tool call succeeds with a result containing "Binary file"
    And the runtime's peak memory stayed under 256 MiB

  @REQ-HARD-008
  Scenario: a text file above the read cap is not read whole
    Given the policy grants File.Read
    And the workspace file "huge.log" holds 12 MiB of numbered lines
    And a running session
    And the model will call ReadFile with:
      """
      {"path": "huge.log"}
      """
    And the model will then answer "I will read it in parts."
    When the client starts the task "Show me huge.log."
    Then the tool call fails with errorCode "FILE_TOO_LARGE" and a message containing "offset"
