Feature: Gateway errors and broken streams
  Rate limits and server errors are retried with backoff; a guardrail block or a credentials
  problem ends the task at once; a stream that breaks off is retried whole without leaving
  half an answer in the thread (local-agent-host.md §6.4, §11; INTEROP.md §2).

  @REQ-LLM-007
  Scenario Outline: a gateway answering <status> is retried and the task goes on
    Given a running session
    And the LLM Gateway answers <status> to the next 1 request
    And the model will then answer "Back on track."
    When the client starts the task "Try once more."
    Then the task_completed result is "Back on track."
    And the runtime reports llm_retry for the first retry

    Examples:
      | status |
      | 429    |
      | 500    |
      | 502    |
      | 503    |
      | 504    |
      | 529    |

  @REQ-LLM-008
  Scenario: a rate-limited request is retried only after Retry-After
    Given a running session
    And the gateway answers the next request with status 429 and Retry-After "1"
    And the model will then answer "Thanks for waiting."
    When the client starts the task "Take your time."
    Then the gateway received the retry at least 1 second after the rate-limited request

  @REQ-LLM-013
  Scenario: a 400 from the gateway fails the task as guardrail-blocked without a retry
    Given a running session
    And the gateway answers the next request with status 400 and the error "The prompt was blocked by the content policy"
    When the client starts the task "Tell me something forbidden."
    Then the task fails with error code "LLM_GUARDRAIL_BLOCKED"
    And the gateway received exactly 1 request

  @REQ-LLM-014
  Scenario Outline: a <status> from the gateway fails the task as unauthorized, naming the gateway's reason
    Given a running session
    And the gateway answers the next request with status <status> and the error "<reason>"
    When the client starts the task "Hello?"
    Then the task fails, with error code "UNAUTHORIZED" for the reference runtime
    And the task_failed message names "<reason>"
    And the gateway received exactly 1 request

    Examples:
      | status | reason                                  |
      | 401    | The gateway token has expired           |
      | 403    | This tenant may not use model gpt-test-1 |

  @REQ-LLM-015
  Scenario Outline: a stream that <breaks> is retried whole and its text enters the thread once
    Given the workspace file "notes.txt" contains "The launch code is 4-8-15-16."
    And a running session
    And the model's first attempt streams "Let me open notes.txt first." and then <breaks>
    And the model will then call ReadFile on "notes.txt" saying "Let me open notes.txt first."
    And the model will then answer "The launch code is 4-8-15-16."
    When the client starts the task "What is the launch code in notes.txt?"
    Then the task_completed result is "The launch code is 4-8-15-16."
    And the last model request carries the assistant text "Let me open notes.txt first." exactly once

    Examples:
      | breaks                |
      | ends without [DONE]   |
      | sends an error event  |
      | disconnects           |

  @REQ-LLM-016
  Scenario Outline: text already forwarded from a stream that <breaks> is withdrawn with llm_response_discarded
    Given a running session
    And the model's first attempt streams "Half of an answer that" and then <breaks>
    And the model will then answer "A whole answer this time."
    When the client starts the task "Answer me."
    Then the runtime reports llm_response_discarded before the retry

    Examples:
      | breaks                |
      | ends without [DONE]   |
      | sends an error event  |
      | disconnects           |
