Feature: HttpRequest reaches the web
  A request that is allowed returns the response in the layout of local-tool-runtime.md §4.5,
  cut and packaged by §7.1–§7.2, with the redirect, size and time limits of §4.5. The kit's web
  server listens on loopback, which HttpRequest refuses outside its test mode: these scenarios
  start the runtime with the one test-only knob they need, AGENT_RUNTIME_ALLOW_LOOPBACK_HTTP
  (conformance/README.md).

  Background:
    Given the runtime is started with AGENT_RUNTIME_ALLOW_LOOPBACK_HTTP set to "true"
    And the policy also grants Network.Http
    And a web server on loopback

  @REQ-TOOL-028
  Scenario: a response comes back as status line, content type, length and body
    Given a running session
    And the model will call HttpRequest with:
      """
      {"url": "${WEB}/plain"}
      """
    And the model will then answer "Fetched."
    When the client starts the task "Fetch the page."
    Then the tool call result is exactly:
      """
      HTTP 200 OK
      Content-Type: text/plain; charset=utf-8
      Content-Length: 25

      Hello from the web fake.
      """

  @REQ-TOOL-028
  Scenario: an error status is a response like any other
    Given a running session
    And the model will call HttpRequest with:
      """
      {"url": "${WEB}/status/404"}
      """
    And the model will then answer "Not there."
    When the client starts the task "Fetch the missing page."
    Then the tool call succeeds with a result containing "HTTP 404 Not Found\nContent-Type: text/plain; charset=utf-8\nContent-Length: 10\n\nstatus 404"

  @REQ-TOOL-028
  Scenario: the method, headers and body given are sent
    Given a running session
    And the model will call HttpRequest with:
      """
      {"url": "${WEB}/echo", "method": "put", "headers": {"X-Trace": "abc-123", "Content-Type": "text/plain"}, "body": "payload 42"}
      """
    And the model will then answer "Sent."
    When the client starts the task "Send the payload."
    Then the tool call succeeds with a result containing '"method":"PUT"'
    And the web server received a PUT request for "/echo" with the header "x-trace" set to "abc-123" and the body "payload 42"

  @REQ-TOOL-029
  Scenario: a long body is cut around the marker and kept whole as a tool_output artifact
    Given the policy grants Network.Http with at most 2000 output bytes
    And a running session
    And the model will call HttpRequest with:
      """
      {"url": "${WEB}/large/20000"}
      """
    And the model will then answer "That is long."
    When the client starts the task "Fetch the long page."
    Then the response body is cut to 2000 bytes: its first 80% and its last 20% around the truncation marker
    And the tool call succeeds with a result containing "Content-Length: 20000\n\nline 000001\n"
    And the tool call result does not contain "line 000900"
    And the Workspace Service receives a tool_output artifact of the tool call containing "line 000900"

  @REQ-TOOL-030
  Scenario: five redirects are followed
    Given a running session
    And the model will call HttpRequest with:
      """
      {"url": "${WEB}/redirect/5"}
      """
    And the model will then answer "Arrived."
    When the client starts the task "Follow the links."
    Then the tool call succeeds with a result containing "arrived"
    And the web server received 6 requests for paths under "/redirect/"

  @REQ-TOOL-030
  Scenario: a sixth redirect is refused and never followed
    Given a running session
    And the model will call HttpRequest with:
      """
      {"url": "${WEB}/redirect/6"}
      """
    And the model will then answer "Too many redirects."
    When the client starts the task "Follow the links."
    Then the tool call fails with errorCode "TOOL_EXECUTION_FAILED" and a message containing "redirects"
    And the web server received 6 requests for paths under "/redirect/"
    And the web server received no request for "/redirect/0"

  @REQ-TOOL-031
  Scenario: a body over 10 MB is aborted
    Given a running session
    And the model will call HttpRequest with:
      """
      {"url": "${WEB}/huge/11000000"}
      """
    And the model will then answer "Too big."
    When the client starts the task "Download the big file."
    Then the tool call fails with errorCode "TOOL_EXECUTION_FAILED" and a message containing "10 MB"

  @REQ-TOOL-032
  Scenario: a response that does not come in time is TOOL_EXECUTION_TIMEOUT
    Given a running session
    And the model will call HttpRequest with:
      """
      {"url": "${WEB}/never", "timeout": 1}
      """
    And the model will then answer "It timed out."
    When the client starts the task "Fetch the slow page."
    Then the tool call fails with errorCode "TOOL_EXECUTION_TIMEOUT" and a message containing "timed out"
