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

  @REQ-POL-013
  Scenario Outline: <url> passes entries written as URLs, IP addresses and wildcards (<why>)
    Given the policy lets HttpRequest reach "https://example.com:8443/docs, 192.0.2.7, [2001:db8::1], 2001:db8::2, ::ffff:192.0.2.8, 0.2.9, api-*.example.org, cdn-*-eu.example.org, 172.*" but never "172.16.*", after approval
    And a running session
    And the model will fetch "<url>"
    When the client starts the task "Fetch it."
    Then the HttpRequest call waits for approval

    Examples:
      | why                                        | url                           |
      | an entry written as a URL with a port      | https://example.com/          |
      | an IPv4 entry                              | http://192.0.2.7/             |
      | an IPv4 entry, host written as mapped IPv6 | http://[::ffff:192.0.2.7]/    |
      | an IPv6 entry in brackets                  | http://[2001:db8::1]/         |
      | an IPv6 entry without brackets             | http://[2001:db8::2]/         |
      | a mapped IPv6 entry, host written as IPv4  | http://192.0.2.8/             |
      | a wildcard inside a label                  | https://api-v2.example.org/   |
      | a wildcard inside a label, then a tail     | https://cdn-7-eu.example.org/ |
      | a wildcard label over an IPv4 address      | http://172.20.0.1/            |

  @REQ-POL-013
  Scenario Outline: <url> is denied by entries written as IP addresses and wildcards (<trick>)
    Given the policy lets HttpRequest reach "https://example.com:8443/docs, 192.0.2.7, [2001:db8::1], 2001:db8::2, ::ffff:192.0.2.8, 0.2.9, api-*.example.org, cdn-*-eu.example.org, 172.*" but never "172.16.*", after approval
    And a running session
    And the model will fetch "<url>"
    And the model will then answer "Done."
    When the client starts the task "Fetch it."
    Then the HttpRequest call is denied

    Examples:
      | trick                                     | url                           |
      | an IPv4 entry is one address              | http://192.0.2.70/            |
      | an IPv6 entry is one address              | http://[2001:db8::3]/         |
      | an address is no subdomain of a number    | http://192.0.2.9/             |
      | a wildcard inside a label keeps its head  | https://web-v2.example.org/   |
      | a wildcard inside a label spans one label | https://api-v2.x.example.org/ |
      | a wildcard inside a label keeps its tail  | https://cdn-7-us.example.org/ |
      | a name is not an IPv6 entry               | https://example.net/          |
      | a blocked wildcard over an IPv4 address   | http://172.16.0.5/            |
      | a blocked wildcard, host as mapped IPv6   | http://[::ffff:172.16.0.5]/   |
      | a blocked wildcard, host in hexadecimal   | http://0xac.16.0.5/           |

  @REQ-POL-025
  Scenario: the reason for a denied HttpRequest names the host as the URL parser reads it
    Given the policy lets HttpRequest reach "example.com" but never "", after approval
    And a running session
    And the model will fetch "http://2130706433/"
    And the model will then answer "I may not fetch that."
    When the client starts the task "Fetch it."
    Then the HttpRequest call is denied
    And the model is told the HttpRequest call was denied because of "127.0.0.1"
