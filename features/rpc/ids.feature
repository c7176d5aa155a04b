Feature: Request ids as JSON-RPC 2.0 defines them
  An id may be a string, a number or null; only a request without an id member is a
  notification. Every reply carries the id of the request it answers, errors included
  (JSON-RPC 2.0 §4, §4.1, §5; INTEROP.md §1).

  Background:
    Given the desktop app has started the runtime

  @REQ-RPC-018
  Scenario: a request whose id is null is answered, with a null id
    Given a running session
    When the client asks for the session state with id null
    Then the runtime answers with a result
    And the response carries the id null

  @REQ-RPC-007
  Scenario Outline: an invalid-params reply echoes the request id (<kind>)
    When the client sends the line '{"jsonrpc": "2.0", "id": <id>, "method": "StartTask", "params": {"sessionId": "sess_1", "prompt": 42}}'
    Then the runtime answers with an error
    And the response carries the id <id>

    Examples:
      | kind     | id       |
      | a number | 41       |
      | a string | "req_41" |
