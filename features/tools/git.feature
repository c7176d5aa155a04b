Feature: The git tools
  GitStatus, GitDiff, GitCommit and GitPush run git in the workspace repository, with readable
  results, errors as tool results, and the approvals their capabilities ask for
  (system-design.md capability table: Git.Status, Git.Diff, Git.Commit, Git.Push).

  @REQ-TOOL-019
  Scenario: GitStatus shows the branch and the changed and untracked files
    Given the workspace file "notes.txt" contains "first"
    And the workspace is a git repository with "notes.txt" committed
    And the workspace file "notes.txt" contains "second"
    And the workspace file "todo.txt" contains "new"
    And the policy also grants Git.Status
    And a running session
    And the model will call GitStatus with:
      """
      {}
      """
    And the model will then answer "notes.txt changed and todo.txt is new."
    When the client starts the task "What changed?"
    Then the tool call succeeds with a result containing "main"
    And the tool call succeeds with a result containing " M notes.txt"
    And the tool call succeeds with a result containing "?? todo.txt"

  @REQ-TOOL-020
  Scenario: GitDiff shows the unified diff of the changes
    Given the workspace file "notes.txt" contains "first"
    And the workspace is a git repository with "notes.txt" committed
    And the workspace file "notes.txt" contains "second"
    And the policy also grants Git.Diff
    And a running session
    And the model will call GitDiff with:
      """
      {"path": "${WORKSPACE}"}
      """
    And the model will then answer "first became second."
    When the client starts the task "Show me the diff."
    Then the tool call succeeds with a result containing "--- a/notes.txt"
    And the tool call succeeds with a result containing "-first"
    And the tool call succeeds with a result containing "+second"

  @REQ-TOOL-021
  Scenario: GitCommit commits the named files once the user approves
    Given the workspace file "notes.txt" contains "first"
    And the workspace is a git repository with "notes.txt" committed
    And the workspace file "todo.txt" contains "write the docs"
    And the policy requires approval for Git.Commit under the rule "Commit changes"
    And a running session
    And the model will call GitCommit with:
      """
      {"message": "Add the todo list", "files": ["todo.txt"]}
      """
    And the model will then answer "Committed."
    When the client starts the task "Commit todo.txt."
    And the runtime asks for approval
    And the user approves the action
    Then the tool call succeeds with a result containing "Add the todo list"
    And the workspace repository's last commit is "Add the todo list" holding "todo.txt"

  @REQ-TOOL-022
  Scenario: GitPush pushes the commits to the remote
    Given the workspace file "notes.txt" contains "first"
    And the workspace is a git repository with "notes.txt" committed
    And the workspace repository has the bare remote "origin.git" beside the workspace
    And the policy grants Git.Push under ".." but blocks "secrets/"
    And a running session
    And the model will call GitPush with:
      """
      {"remote": "origin", "branch": "main"}
      """
    And the model will then answer "Pushed."
    When the client starts the task "Push main."
    Then the tool call succeeds with a result containing "main"
    And the bare remote "origin.git" has the workspace's last commit on main

  @REQ-TOOL-023
  Scenario: a git tool outside a repository says so
    Given the workspace file "notes.txt" contains "not versioned"
    And the policy also grants Git.Status
    And a running session
    And the model will call GitStatus with:
      """
      {}
      """
    And the model will then answer "This folder is not a repository."
    When the client starts the task "What changed?"
    Then the tool call fails with errorCode "TOOL_EXECUTION_FAILED" and a message containing "not a git repository"

  @REQ-POL-023
  Scenario: GitCommit staging a file the Git.Commit entry blocks is denied
    Given the workspace file "notes.txt" contains "first"
    And the workspace is a git repository with "notes.txt" committed
    And the workspace file "secrets/key.txt" contains "hunter2"
    And the policy grants Git.Commit with blockedPaths "secrets/" only
    And a running session
    And the model will call GitCommit with:
      """
      {"message": "Add the key", "files": ["secrets/key.txt"]}
      """
    And the model will then answer "Not allowed."
    When the client starts the task "Commit the key."
    Then the scripted tool call is denied

  @REQ-POL-023
  Scenario: a git tool whose repository folder the Git entry's allowedPaths leave out is denied
    Given the workspace file "notes.txt" contains "first"
    And the workspace is a git repository with "notes.txt" committed
    And the workspace file "notes.txt" contains "second"
    And the policy grants Git.Status with allowedPaths "docs/" only
    And a running session
    And the model will call GitStatus with:
      """
      {}
      """
    And the model will then answer "Not allowed."
    When the client starts the task "What changed?"
    Then the scripted tool call is denied

  @REQ-POL-022
  Scenario: under a policy that names no Git capability, GitStatus runs as a read of the project
    Given the workspace file "notes.txt" contains "first"
    And the workspace is a git repository with "notes.txt" committed
    And the workspace file "notes.txt" contains "second"
    And a running session
    And the model will call GitStatus with:
      """
      {}
      """
    And the model will then answer "notes.txt changed."
    When the client starts the task "What changed?"
    Then the tool call succeeds with a result containing " M notes.txt"

  @REQ-POL-022
  Scenario: under a policy that names Git.Status, GitStatus runs without File.Read
    Given the workspace file "notes.txt" contains "first"
    And the workspace is a git repository with "notes.txt" committed
    And the workspace file "notes.txt" contains "second"
    And the policy does not grant File.Read
    And the policy also grants Git.Status
    And a running session
    And the model will call GitStatus with:
      """
      {}
      """
    And the model will then answer "notes.txt changed."
    When the client starts the task "What changed?"
    Then the tool call succeeds with a result containing " M notes.txt"
