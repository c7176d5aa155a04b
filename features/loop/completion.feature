Feature: When the model is done
  The model signals the end of a task with a text-only answer. Tool calls mean more work,
  whatever the finish reason; an answer cut off by the output limit means the model is not
  done yet; an answer withheld by the content filter fails the task
  (local-agent-host.md §4.4, §11; INTEROP.md §2).

  Background:
    Given the workspace file "notes.txt" contains "The launch code is 4-8-15-16."
    And a running session

  @REQ-LOOP-015
  Scenario Outline: tool calls with finish_reason "<finish>" run and the model is asked again
    Given the model will call ReadFile on "notes.txt" with finish reason "<finish>"
    And the model will then answer "The launch code is 4-8-15-16."
    When the client starts the task "What is the launch code?"
    Then the ReadFile call runs
    And the task completes after 2 model requests

    Examples:
      | finish     |
      | tool_calls |
      | stop       |
      | length     |

  @REQ-LOOP-016
  Scenario: an answer cut off by the output limit is continued, not taken as the end
    Given the model will stop with finish reason "length" after answering "The launch code is"
    And the model will then answer "4-8-15-16."
    When the client starts the task "What is the launch code?"
    Then the ReadFile call does not run
    And the task completes after 2 model requests
    And the second model request continues after the answer "The launch code is"

  @REQ-LOOP-017
  Scenario: a model cut off again and again fails the task as truncated
    Given the model will stop with finish reason "length" after answering "And then", 4 times in a row
    And the model will then answer "Never reached."
    When the client starts the task "Tell me a very long story."
    Then the task fails with error code "LLM_OUTPUT_TRUNCATED"
    And the model was asked 4 times

  @REQ-LOOP-018
  Scenario: an answer stopped by the content filter fails the task as guardrail-blocked
    Given the model will stop with finish reason "content_filter" after answering "I cannot"
    When the client starts the task "Tell me something forbidden."
    Then the task fails with error code "LLM_GUARDRAIL_BLOCKED"
