Feature: blockedCommands win over allowedCommands
  The blocklist takes priority (local-agent-host.md §8.4): a line is denied when it holds a
  command a blockedCommands entry names, even when allowedCommands admits every program in
  it (INTEROP.md §5: multi-word entries).

  @REQ-POL-011
  Scenario Outline: a blocked command is denied although its program is allowed (<line>)
    Given the policy allows the commands "rm, git, echo" and blocks the commands "rm -rf, git push"
    And the workspace file "scratch/keep.txt" contains "keep me"
    And a running session
    And the model will run the command "<line>"
    And the model will then answer "Done."
    When the client starts the task "Clean up and publish."
    Then the RunCommand call is denied
    And the workspace folder "scratch" still exists

    Examples:
      | line                       |
      | echo ok && rm -rf scratch  |
      | git push origin main       |
