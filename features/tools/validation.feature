Feature: RunCommand validates the command before anything runs
  An empty command, or one carrying a NUL byte, is refused by the tool runtime itself
  (local-tool-runtime.md §8.2), and nothing is executed.

  Background:
    Given the policy also grants Shell.Exec
    And a running session

  @REQ-TOOL-034
  Scenario: a blank command is INVALID_REQUEST
    Given the model will call RunCommand with:
      """
      {"command": " \t "}
      """
    And the model will then answer "I will fix my command."
    When the client starts the task "Run a command."
    Then the tool call is refused with a message containing "empty"

  @REQ-TOOL-034
  Scenario: a command with a NUL byte is INVALID_REQUEST and nothing runs
    Given the model will call RunCommand with:
      """
      {"command": "touch ran.txt\u0000; true"}
      """
    And the model will then answer "I will fix my command."
    When the client starts the task "Run a command."
    Then the tool call is refused with a message containing "NUL byte"
    And the workspace has no file "ran.txt"
