Feature: Creating a session
  CreateSession asks the Session Service for a session and a policy bundle, checks the bundle,
  and either reports the session ready or tells the user, in words, why not — staying alive
  either way (local-agent-host.md §3.2, INTEROP.md §1 and §3).

  @REQ-SES-001
  Scenario: the runtime asks the Session Service for a session on the client's behalf
    When the client creates a session
    Then the Session Service received the client's identity, capabilities and workspace

  @REQ-SES-002
  Scenario: a compatible session is ready with the ids, flags and policy version issued
    Given the Session Service issues policy bundle version "2026-11-22.c0ffee00"
    And the Session Service turns on the feature flag "betaTools"
    When the client creates a session
    Then the session is running with the ids the Session Service issued
    And the session reports policy bundle version "2026-11-22.c0ffee00"
    And the session reports the feature flag "betaTools" turned on

  @REQ-SES-003
  Scenario: a new session is announced with session_started
    When the client creates a session
    Then the runtime reports session_started for the new session

  @REQ-SES-018
  Scenario: a running session reports SESSION_RUNNING
    Given a running session
    When the client asks for the session state
    Then the session state reports the session as SESSION_RUNNING

  @REQ-SES-011 @REQ-RPC-015 @REQ-RPC-016
  Scenario Outline: CreateSession fails readably and the runtime lives on when <situation>
    Given <setup>
    When the client creates a session
    # judges @REQ-SES-004 @REQ-SES-006 @REQ-SES-007 @REQ-SES-008 @REQ-SES-009 @REQ-SES-010
    Then the request fails
    # judges @REQ-RPC-015
    And the request fails with error code "<code>"
    # judges @REQ-RPC-015 @REQ-SES-009 @REQ-SES-010
    And the error is <retry>
    # judges @REQ-RPC-016
    And the error message is a readable sentence
    # judges @REQ-SES-011
    And the runtime still answers GetSessionState

    @REQ-SES-004
    Examples: the Session Service refuses the client
      | situation               | setup                                                                               | code                 | retry         |
      | the client is too old   | the Session Service answers incompatible because "desktop app 0.9 is no longer supported" | SESSION_INCOMPATIBLE | not retryable |

    @REQ-SES-006
    Examples: the policy bundle has expired
      | situation               | setup                                                          | code                  | retry         |
      | the bundle has expired  | the Session Service issues a policy bundle that expired an hour ago | POLICY_BUNDLE_INVALID | not retryable |

    @REQ-SES-007
    Examples: the policy bundle is for another session
      | situation                    | setup                                                   | code                  | retry         |
      | the bundle names another session | the Session Service issues a policy bundle for another session | POLICY_BUNDLE_INVALID | not retryable |

    @REQ-SES-008
    Examples: the policy bundle's schema version is unsupported
      | situation                     | setup                                                           | code                  | retry         |
      | the bundle schema is too new  | the Session Service issues a policy bundle with schemaVersion "9.0" | POLICY_BUNDLE_INVALID | not retryable |

    @REQ-SES-009
    Examples: the Session Service cannot be reached
      | situation                      | setup                        | code                | retry     |
      | the Session Service is down    | the Session Service is down  | SERVICE_UNAVAILABLE | retryable |

    @REQ-SES-010
    Examples: the Session Service fails
      | situation                          | setup                                                | code                | retry     |
      | the Session Service answers 500    | the Session Service answers 500 to every request | SERVICE_UNAVAILABLE | retryable |
      | the Session Service answers 503    | the Session Service answers 503 to every request | SERVICE_UNAVAILABLE | retryable |

  @REQ-SES-005
  Scenario: the incompatibility error tells the user the Session Service's reason
    Given the Session Service answers incompatible because "desktop app 0.9 is no longer supported"
    When the client creates a session
    Then the request fails with error code "SESSION_INCOMPATIBLE"
    And the error message names "desktop app 0.9 is no longer supported"

  @REQ-SES-023
  Scenario: the runtime asks for the capabilities of its own tools beside the app's
    Given the workspace file "notes.txt" contains "first"
    And the workspace is a git repository with "notes.txt" committed
    And the policy also grants Git.Status
    And the Policy Service grants only the capabilities the runtime asks for
    And a running session
    And the model will call GitStatus with:
      """
      {}
      """
    And the model will then answer "Nothing changed."
    When the client starts the task "What changed?"
    Then the tool call succeeds with a result containing "main"
