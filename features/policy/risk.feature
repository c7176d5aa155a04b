Feature: How risky an action is rated
  The approval request's riskLevel follows the table of local-agent-host.md §8.5 and its
  elevations: a write outside the project, a command not in allowedCommands, a host not in
  allowedDomains are high.

  @REQ-POL-018
  Scenario Outline: <action> is rated <risk>
    Given the policy requires approval for <capability> scoped by '<scope>'
    And the workspace file "notes.txt" contains "Some notes."
    And the workspace symlink "up" points to ".."
    And a running session
    And <call>
    When the client starts the task "Do it."
    Then the approval request rates the risk "<risk>"

    Examples:
      | action                              | capability   | scope                              | call                                                                | risk   |
      | a write inside the project          | File.Write   | {}                                 | the model will write "x" into the workspace file "draft.txt"        | medium |
      | a write outside the project         | File.Write   | {}                                 | the model will write "x" into the workspace file "../draft.txt"     | high   |
      | a write escaping through a symlink  | File.Write   | {}                                 | the model will write "x" into the workspace file "up/draft.txt"     | high   |
      | an allowlisted command              | Shell.Exec   | {"allowedCommands": ["ls"]}        | the model will run the command "ls -la"                             | medium |
      | a command no allowlist names        | Shell.Exec   | {"blockedCommands": ["sudo"]}      | the model will run the command "ls -la"                             | high   |
      | a request to an allowlisted host    | Network.Http | {"allowedDomains": ["example.com"]} | the model will fetch "https://example.com/"                        | medium |
      | a request to an unrecognised host   | Network.Http | {}                                 | the model will fetch "https://example.com/"                         | high   |
      | reading a file                      | File.Read    | {"allowedPaths": ["."]}            | the model will call ReadFile on "notes.txt"                         | low    |
      | deleting a file                     | File.Delete  | {}                                 | the model will call DeleteFile on "notes.txt"                       | high   |
