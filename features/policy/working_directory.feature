Feature: RunCommand's working directory obeys the policy
  Shell.Exec is scoped by a command allowlist and cwd paths (system-design.md §9): a command
  runs only in a folder the entry's allowedPaths admit and its blockedPaths do not name.

  Background:
    Given the policy allows Shell.Exec in "." but blocks "secrets/"
    And the workspace folder "src" exists
    And the workspace folder "secrets" exists

  @REQ-POL-021
  Scenario Outline: a command whose working directory is outside the allowed paths is denied (<where>)
    Given a running session
    And the model will run "touch ran.txt" with the working directory "<cwd>"
    And the model will then answer "Done."
    When the client starts the task "Run it there."
    Then the RunCommand call is denied
    And no file "ran.txt" was made in the folder "<cwd>"

    Examples:
      | where                         | cwd     |
      | the workspace's parent        | ..      |
      | an absolute folder outside    | ${HOME} |
      | a blocked folder              | secrets |

  @REQ-POL-021
  Scenario: blockedPaths alone judge the working directory
    Given the policy grants Shell.Exec with blockedPaths "secrets/" only
    And a running session
    And the model will run "touch ran.txt" with the working directory "secrets"
    And the model will then answer "Done."
    When the client starts the task "Run it there."
    Then the RunCommand call is denied
    And no file "ran.txt" was made in the folder "secrets"

  @REQ-POL-021
  Scenario: a command whose working directory is an allowed folder runs
    Given a running session
    And the model will run "touch ran.txt" with the working directory "src"
    And the model will then answer "Done."
    When the client starts the task "Run it in src."
    Then the RunCommand call runs
