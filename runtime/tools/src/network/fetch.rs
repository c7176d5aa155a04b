//! One HttpRequest call on the wire (local-tool-runtime.md §4.5 steps 2–3): redirects are
//! followed here, not by the client, so that every hop is checked by [`ssrf::check_url`] before
//! it is sent and resolved by the vetting resolver when it connects; the body is read chunk by
//! chunk with a running count and abandoned as soon as it passes the cap.

use reqwest::header::{self, HeaderMap};
use reqwest::{Client, Method, StatusCode};
use url::Url;

use agent_protocol::UrlCheck;

use crate::platform::ssrf::{self, AddressPolicy, Refusal};

/// §4.5: "Redirect following is limited to 5 hops".
pub(crate) const MAX_REDIRECTS: usize = 5;

/// What to send on the first hop.
#[derive(Debug, Clone)]
pub(crate) struct Outgoing {
    pub method: Method,
    pub url: Url,
    pub headers: HeaderMap,
    pub body: Option<String>,
}

/// The final response, its body read whole (at most the cap).
#[derive(Debug)]
pub(crate) struct Incoming {
    /// Where the body came from: the last hop's URL.
    pub url: Url,
    pub status: StatusCode,
    pub content_type: Option<String>,
    pub body: Vec<u8>,
}

#[derive(Debug, thiserror::Error)]
pub(crate) enum FetchError {
    /// The URL of a hop may not be requested (§8.3): INVALID_REQUEST.
    #[error("{}refused {url}: {refusal}", hop_label(*.hop))]
    Refused {
        hop: usize,
        url: String,
        refusal: Refusal,
    },
    /// The host's policy refuses the URL of a redirect hop: CAPABILITY_DENIED.
    #[error("{}{url} is not allowed by the policy: {reason}", hop_label(*.hop))]
    Denied {
        hop: usize,
        url: String,
        reason: String,
    },
    #[error("more than {MAX_REDIRECTS} redirects: {}", .chain.join(" -> "))]
    TooManyRedirects { chain: Vec<String> },
    #[error("redirect {hop} from {from} has an unusable Location \"{location}\": {reason}")]
    BadRedirect {
        hop: usize,
        from: String,
        location: String,
        reason: String,
    },
    #[error(
        "the response body from {url} {detail}, more than the cap of {cap} bytes (10 MB); the download was aborted"
    )]
    TooLarge {
        url: String,
        detail: String,
        cap: usize,
    },
    #[error("request to {url} failed: {message}")]
    Transport { url: String, message: String },
}

fn hop_label(hop: usize) -> String {
    if hop == 0 {
        String::new()
    } else {
        format!("redirect {hop}: ")
    }
}

/// The client every call shares: no automatic redirects, no proxy (a proxy would resolve
/// names itself, out of the resolver's sight), the vetting resolver as its only DNS.
pub(crate) fn client(policy: AddressPolicy) -> Result<Client, String> {
    agent_tls::client_builder()
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .referer(false)
        .dns_resolver(ssrf::VettingResolver { policy })
        .build()
        .map_err(|error| format!("HttpRequest: could not build the HTTP client: {error}"))
}

/// Sends `outgoing`, following up to [`MAX_REDIRECTS`] redirects, each hop vetted.
pub(crate) async fn fetch(
    client: &Client,
    policy: AddressPolicy,
    outgoing: Outgoing,
    max_body: usize,
    url_check: Option<&UrlCheck>,
) -> Result<Incoming, FetchError> {
    let mut current = outgoing;
    let mut chain = vec![current.url.to_string()];
    for hop in 0..=MAX_REDIRECTS {
        // The first URL was judged by the host before the call; each redirect is a new
        // destination and gets the same domain rules.
        if hop > 0
            && let Some(check) = url_check
        {
            check
                .check(current.url.as_str())
                .map_err(|reason| FetchError::Denied {
                    hop,
                    url: current.url.to_string(),
                    reason,
                })?;
        }
        ssrf::check_url(&current.url, policy).map_err(|refusal| FetchError::Refused {
            hop,
            url: current.url.to_string(),
            refusal,
        })?;
        let mut builder = client
            .request(current.method.clone(), current.url.clone())
            .headers(current.headers.clone());
        if let Some(body) = &current.body {
            builder = builder.body(body.clone());
        }
        let response = builder
            .send()
            .await
            .map_err(|error| transport_error(hop, &current.url, &error))?;
        let status = response.status();
        let location = response
            .headers()
            .get(header::LOCATION)
            .map(|value| String::from_utf8_lossy(value.as_bytes()).into_owned());
        let Some(location) = location.filter(|_| is_redirect(status)) else {
            return read_body(response, &current.url, max_body).await;
        };
        let next = current
            .url
            .join(&location)
            .map_err(|error| FetchError::BadRedirect {
                hop: hop + 1,
                from: current.url.to_string(),
                location: location.clone(),
                reason: error.to_string(),
            })?;
        chain.push(next.to_string());
        if hop == MAX_REDIRECTS {
            return Err(FetchError::TooManyRedirects { chain });
        }
        current = redirected(current, status, next);
    }
    Err(FetchError::TooManyRedirects { chain })
}

fn is_redirect(status: StatusCode) -> bool {
    matches!(status.as_u16(), 301 | 302 | 303 | 307 | 308)
}

/// The request of the next hop, as browsers make it: 303 (and 301/302 after a POST) turns
/// into a GET without body; 307/308 repeat method and body. Credentials are not carried to
/// another origin.
fn redirected(mut previous: Outgoing, status: StatusCode, next: Url) -> Outgoing {
    let to_get = match status.as_u16() {
        303 => previous.method != Method::HEAD,
        301 | 302 => previous.method == Method::POST,
        _ => false,
    };
    if to_get {
        previous.method = Method::GET;
        previous.body = None;
        for name in [
            header::CONTENT_TYPE,
            header::CONTENT_LENGTH,
            header::CONTENT_ENCODING,
            header::TRANSFER_ENCODING,
        ] {
            previous.headers.remove(name);
        }
    }
    if previous.url.origin() != next.origin() {
        for name in [
            header::AUTHORIZATION,
            header::COOKIE,
            header::PROXY_AUTHORIZATION,
        ] {
            previous.headers.remove(name);
        }
    }
    previous.url = next;
    previous
}

/// A client error as a [`FetchError`]: the resolver's refusal is a refusal, anything else a
/// transport failure described with all its causes.
fn transport_error(hop: usize, url: &Url, error: &reqwest::Error) -> FetchError {
    if let Some(refusal) = ssrf::refusal_in(error) {
        return FetchError::Refused {
            hop,
            url: url.to_string(),
            refusal: refusal.clone(),
        };
    }
    FetchError::Transport {
        url: url.to_string(),
        message: causes(error),
    }
}

/// `error: cause: cause`, without repeating a cause already contained in the text.
fn causes(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut current = error.source();
    while let Some(cause) = current {
        let line = cause.to_string();
        if !text.contains(&line) {
            text.push_str(": ");
            text.push_str(&line);
        }
        current = cause.source();
    }
    text
}

/// The body, refused early when its declared length passes `max_body`, abandoned as soon as
/// the running count does: at most one chunk beyond the cap is ever held.
async fn read_body(
    mut response: reqwest::Response,
    url: &Url,
    max_body: usize,
) -> Result<Incoming, FetchError> {
    let too_large = |detail: String| FetchError::TooLarge {
        url: url.to_string(),
        detail,
        cap: max_body,
    };
    let status = response.status();
    let content_type = response
        .headers()
        .get(header::CONTENT_TYPE)
        .map(|value| String::from_utf8_lossy(value.as_bytes()).trim().to_owned());
    let declared = response
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok()?.trim().parse::<u64>().ok());
    if let Some(declared) = declared
        && declared > u64::try_from(max_body).unwrap_or(u64::MAX)
    {
        return Err(too_large(format!("declares {declared} bytes")));
    }
    let mut body = Vec::new();
    loop {
        let chunk = response
            .chunk()
            .await
            .map_err(|error| FetchError::Transport {
                url: url.to_string(),
                message: format!("reading the body: {}", causes(&error)),
            })?;
        let Some(chunk) = chunk else { break };
        if body.len().saturating_add(chunk.len()) > max_body {
            let received = body.len().saturating_add(chunk.len());
            return Err(too_large(format!("passed {received} bytes")));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(Incoming {
        url: url.clone(),
        status,
        content_type,
        body,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outgoing(method: Method, url: &str) -> Outgoing {
        let mut headers = HeaderMap::new();
        headers.insert(header::AUTHORIZATION, "Bearer t".parse().unwrap());
        headers.insert(header::CONTENT_TYPE, "application/json".parse().unwrap());
        headers.insert("x-custom", "1".parse().unwrap());
        Outgoing {
            method,
            url: Url::parse(url).unwrap(),
            headers,
            body: Some("{}".into()),
        }
    }

    #[test]
    fn redirects_change_method_and_drop_credentials_as_browsers_do() {
        let same = Url::parse("http://a.example/next").unwrap();
        let other = Url::parse("http://b.example/next").unwrap();
        let post = || outgoing(Method::POST, "http://a.example/");

        let next = redirected(post(), StatusCode::SEE_OTHER, same.clone());
        assert_eq!(
            (next.method.clone(), next.body.clone()),
            (Method::GET, None)
        );
        assert!(next.headers.get(header::CONTENT_TYPE).is_none());
        assert!(next.headers.get(header::AUTHORIZATION).is_some());
        assert_eq!(next.url, same);

        let next = redirected(post(), StatusCode::FOUND, other.clone());
        assert_eq!(next.method, Method::GET);
        assert!(next.headers.get(header::AUTHORIZATION).is_none());
        assert!(next.headers.get("x-custom").is_some());

        let next = redirected(post(), StatusCode::PERMANENT_REDIRECT, same.clone());
        assert_eq!(
            (next.method, next.body.as_deref()),
            (Method::POST, Some("{}"))
        );

        let put = outgoing(Method::PUT, "http://a.example/");
        let next = redirected(put, StatusCode::MOVED_PERMANENTLY, same.clone());
        assert_eq!(next.method, Method::PUT);
        let head = outgoing(Method::HEAD, "http://a.example/");
        assert_eq!(
            redirected(head, StatusCode::SEE_OTHER, same).method,
            Method::HEAD
        );
    }
}
