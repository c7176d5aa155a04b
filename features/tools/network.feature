Feature: HttpRequest refuses local addresses
  Only http and https reach the network, and never a loopback, private, link-local or metadata
  address, however it is written (local-tool-runtime.md §4.5, §8.3). The kit's own services
  listen on loopback, so it certifies the refusal side: the request is refused and never sent.

  Background:
    Given the policy also grants Network.Http

  @REQ-TOOL-017
  Scenario: a request to a loopback service is refused and never reaches it
    Given a running session
    And the model will call HttpRequest with:
      """
      {"url": "${WORKSPACE_SERVICE}/ssrf-probe", "method": "GET"}
      """
    And the model will then answer "That address is not allowed."
    When the client starts the task "Fetch the internal page."
    Then the tool call fails with errorCode "INVALID_REQUEST" and a message containing "/ssrf-probe"
    And the Workspace Service received no request for "/ssrf-probe"

  @REQ-TOOL-017
  Scenario Outline: local and internal addresses are refused in every spelling
    Given a running session
    And the model will call HttpRequest with:
      """
      {"url": "<url>"}
      """
    And the model will then answer "That address is not allowed."
    When the client starts the task "Fetch the page."
    Then the tool call fails with errorCode "INVALID_REQUEST" and a message containing "refused"

    Examples:
      | url                                        |
      | http://localhost:9/                        |
      | http://127.0.0.1:9/                        |
      | http://[::1]:9/                            |
      | http://10.0.0.1/                           |
      | http://172.16.5.4/                         |
      | http://192.168.1.1/                        |
      | http://169.254.169.254/latest/meta-data/   |
      | http://2130706433/                         |
      | http://0x7f.0.0.1/                         |
      | http://[::ffff:127.0.0.1]/                 |
      | http://0.0.0.0/                            |

  @REQ-TOOL-018
  Scenario Outline: only http and https are allowed
    Given a running session
    And the model will call HttpRequest with:
      """
      {"url": "<url>"}
      """
    And the model will then answer "That scheme is not allowed."
    When the client starts the task "Fetch the file."
    Then the tool call is refused with a message containing "http and https"

    Examples:
      | url                      |
      | file:///etc/passwd       |
      | ftp://example.com/a.txt  |

  @REQ-TOOL-017
  Scenario Outline: IPv6 link-local, site-local and unique-local addresses are refused (<url>)
    Given a running session
    And the model will call HttpRequest with:
      """
      {"url": "<url>"}
      """
    And the model will then answer "That address is not allowed."
    When the client starts the task "Fetch the page."
    Then the HttpRequest call is refused

    Examples:
      | url                  |
      | http://[fe80::1]/    |
      | http://[fec0::1]/    |
      | http://[fd00::1]/    |
