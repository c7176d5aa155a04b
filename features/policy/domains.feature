Feature: Hosts the policy lets HttpRequest reach
  The host of an HttpRequest URL — as a browser would parse it — is judged against
  allowedDomains and blockedDomains: an entry matches its domain and the domain's
  subdomains, `*` stands for whole labels, blockedDomains wins, and look-alike hosts never
  match (local-agent-host.md §8.2; INTEROP.md §5).

  @REQ-POL-013
  Scenario Outline: <url> is denied (<trick>)
    Given the policy lets HttpRequest reach "example.com, *.trusted.org" but never "internal.example.com", after approval
    And a running session
    And the model will fetch "<url>"
    And the model will then answer "Done."
    When the client starts the task "Fetch it."
    Then the HttpRequest call is denied

    Examples:
      | trick                          | url                                   |
      | allowed name as a prefix       | https://example.com.evil.net/         |
      | allowed name as a suffix       | https://evil-example.com/             |
      | allowed name glued on          | https://notexample.com/               |
      | allowed name in the userinfo   | https://example.com@evil.net/         |
      | allowed name in the query      | https://evil.net/?host=example.com    |
      | allowed name in the path       | https://evil.net/example.com          |
      | blocked subdomain wins         | https://internal.example.com/         |
      | blocked subdomain, other case  | https://INTERNAL.Example.COM/         |
      | wildcard needs a label         | https://trusted.org/                  |
      | wildcard name as a prefix      | https://a.trusted.org.evil.net/       |
      | no http scheme                 | file:///etc/passwd                    |

  @REQ-POL-013
  Scenario Outline: <url> passes the domain rules and waits for approval (<why>)
    Given the policy lets HttpRequest reach "example.com, *.trusted.org" but never "internal.example.com", after approval
    And a running session
    And the model will fetch "<url>"
    When the client starts the task "Fetch it."
    Then the HttpRequest call waits for approval

    Examples:
      | why                       | url                              |
      | the domain itself         | https://example.com/page         |
      | a subdomain               | https://api.example.com/v1       |
      | case does not matter      | https://EXAMPLE.com/             |
      | a trailing dot            | https://example.com./            |
      | wildcard label            | https://a.trusted.org/           |
      | wildcard, several labels  | https://a.b.trusted.org/         |
