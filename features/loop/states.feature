Feature: The task-level state machine as the client sees it
  GetSessionState returns both levels of the state machine. Of the task-level states, the
  client can catch WAITING_FOR_LLM (the model has not answered yet) and IDLE (the task has
  ended and its history is saved); the states passed through without waiting are certified
  by the events around them (local-agent-host.md §3.3).

  Background:
    Given a running session

  @REQ-LOOP-019
  Scenario: the task waits for the model in WAITING_FOR_LLM
    Given the model will wait before answering
    When the client starts the task "Take your time."
    And the model has received the task's request
    And the client asks for the session state
    Then the session state shows the task as WAITING_FOR_LLM

  @REQ-LOOP-020
  Scenario Outline: a task that ended with <terminal> leaves the session IDLE
    Given <model>
    When the client starts the task "Do what you do." with taskOptions.maxSteps 2
    And <client>
    And the task finishes
    And the client asks for the session state
    Then the task ended with <terminal>
    And the session state shows the task as IDLE

    Examples:
      | terminal       | model                                                       | client                                                              |
      | task_completed | the model will answer "Done and dusted."                    | the model has received the task's request                           |
      | task_failed    | the model will call ReadFile on "notes.txt" in every answer | the model has received the task's request                           |
      | task_cancelled | the model will wait before answering                        | the client cancels the task once the model has received its request |
