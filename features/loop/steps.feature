Feature: Steps and the step limit
  A task runs in steps: one model call and the tools it asked for. Each step is announced and
  closed with events that count the steps done; the step limit warns at 80% and stops a task
  that never finishes (local-agent-host.md §4.1, §4.3, §12; INTEROP.md §1).

  @REQ-LOOP-010
  Scenario: every step is bracketed by step_started and step_completed
    Given a running session
    And the model will call ReadFile on "notes.txt" 2 times, then answer "Nothing interesting in there."
    When the client starts the task "What is in notes.txt?"
    Then every step is reported by step_started and then step_completed, counting the steps done

  @REQ-LOOP-011
  Scenario: a task answered in one model call has made one step
    Given a running session
    And the model will answer "Hello to you too."
    When the client starts the task "Say hello."
    Then the task completes reporting stepCount 1

  @REQ-LOOP-011
  Scenario: the answering step counts after the tool steps
    Given a running session
    And the model will call ReadFile on "notes.txt" 2 times, then answer "Nothing interesting in there."
    When the client starts the task "What is in notes.txt?"
    Then the task completes reporting stepCount 3

  @REQ-LOOP-012
  Scenario: a model that never stops calling tools fails the task at maxSteps
    Given a running session
    And the model will call ReadFile on "notes.txt" in every answer
    When the client starts the task "Keep reading notes.txt." with taskOptions.maxSteps 3
    Then the task fails with error code "MAX_STEPS_EXCEEDED" and reason "max_steps_exceeded"
    And the failure is not recoverable
    And the model was asked 3 times

  @REQ-LOOP-013
  Scenario: without taskOptions.maxSteps the limit is DEFAULT_MAX_STEPS
    Given the runtime is started with DEFAULT_MAX_STEPS set to "2"
    And a running session
    And the model will call ReadFile on "notes.txt" in every answer
    When the client starts the task "Keep reading notes.txt."
    Then the task fails with error code "MAX_STEPS_EXCEEDED" and reason "max_steps_exceeded"
    And the model was asked 2 times

  @REQ-LOOP-014
  Scenario Outline: with maxSteps <maxSteps>, step_limit_approaching <when>
    Given a running session
    And the model will call ReadFile on "notes.txt" in every answer
    When the client starts the task "Keep reading notes.txt." with taskOptions.maxSteps <maxSteps>
    Then step_limit_approaching <when>

    Examples:
      | maxSteps | when                                  |
      | 5        | is reported once, after step 4 of 5   |
      | 2        | is reported once, after step 1 of 2   |
      | 10       | is reported once, after step 8 of 10  |
      | 1        | is never reported                     |
