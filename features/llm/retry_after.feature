Feature: Retry-After is honoured in full
  A 429 from the gateway carries Retry-After in seconds; the retry waits at least that long,
  however short the runtime's own backoff is (local-agent-host.md §6.4; INTEROP.md §2). The
  kit measures the gap between the two requests its gateway received; it never sleeps.

  @REQ-LLM-008
  Scenario: a Retry-After longer than the backoff is waited out before the retry is sent
    Given a running session
    And the gateway answers the next request with status 429 and Retry-After "1"
    And the model will then answer "Thanks for waiting."
    When the client starts the task "Take your time."
    Then the gateway received the retry at least 1 second after the rate-limited request
