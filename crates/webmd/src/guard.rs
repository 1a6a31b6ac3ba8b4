//! Where a fetch may connect: never this computer or a private network unless the person allowed
//! the host. This owns the address classifier ([`is_refused`]), the allow-list ([`AllowList`]), the
//! check of IP-literal hosts ([`Guard::check_literal`]) and the DNS resolver the HTTP client
//! connects through ([`GuardedResolver`]), which drops refused addresses *after* resolution and
//! hands the client only the vetted ones, so the address checked is the address connected to (no
//! DNS rebinding between the two).

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;

use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use url::{Host, Url};

use crate::Error;

/// The fetch's guard: the allow-list, shared by the literal check and the resolver.
#[derive(Debug, Clone)]
pub(crate) struct Guard {
    allow: Arc<AllowList>,
}

impl Guard {
    /// A guard that lets `allow_hosts` (see [`AllowList::new`]) reach private addresses.
    pub(crate) fn new(allow_hosts: &[String]) -> Self {
        Self {
            allow: Arc::new(AllowList::new(allow_hosts)),
        }
    }

    /// The resolver to give the HTTP client (`ClientBuilder::dns_resolver`).
    pub(crate) fn resolver(&self) -> Arc<GuardedResolver> {
        Arc::new(GuardedResolver {
            allow: Arc::clone(&self.allow),
        })
    }

    /// Refuses `url` when its host is an IP literal that is refused and not allowed. IP literals
    /// never reach the resolver, so this must run before every request; host names pass here and
    /// are vetted by [`GuardedResolver`] when the client connects.
    pub(crate) fn check_literal(&self, url: &Url) -> Result<(), Error> {
        let ip = match url.host() {
            Some(Host::Ipv4(ip)) => IpAddr::V4(ip),
            Some(Host::Ipv6(ip)) => IpAddr::V6(ip),
            Some(Host::Domain(_)) | None => return Ok(()),
        };
        if is_refused(ip) && !self.allow.allows(url.host_str().unwrap_or_default()) {
            return Err(refused(url));
        }
        Ok(())
    }
}

/// The one refusal, the same whatever is (or is not) listening at `url`.
pub(crate) fn refused(url: &Url) -> Error {
    Error::Refused {
        url: url.to_string(),
    }
}

/// Whether a request failed because [`GuardedResolver`] refused every address of its host.
pub(crate) fn is_refusal(e: &reqwest::Error) -> bool {
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(error) = cause {
        if error.is::<RefusedAddresses>() {
            return true;
        }
        cause = error.source();
    }
    false
}

/// Hosts that may reach private and loopback addresses: host names and IP literals, compared
/// case-insensitively, a trailing dot ignored; `*.example.com` allows every subdomain of
/// example.com (not example.com itself). An IP entry allows only that literal in a URL, not the
/// names that resolve to it, so allowing `127.0.0.1` does not allow `localhost`.
#[derive(Debug, Default)]
pub(crate) struct AllowList {
    ips: Vec<IpAddr>,
    names: Vec<String>,
    /// `*.example.com` kept as `.example.com`.
    suffixes: Vec<String>,
}

impl AllowList {
    /// Reads `hosts`; empty entries are skipped. IPv6 literals may be written with or without
    /// brackets.
    pub(crate) fn new(hosts: &[String]) -> Self {
        let mut list = Self::default();
        for host in hosts {
            let host = normalise(host);
            if host.is_empty() {
                continue;
            }
            if let Ok(ip) = host.parse::<IpAddr>() {
                list.ips.push(ip);
            } else if let Some(domain) = host.strip_prefix("*.") {
                if !domain.is_empty() {
                    list.suffixes.push(format!(".{domain}"));
                }
            } else {
                list.names.push(host);
            }
        }
        list
    }

    /// Whether `host` (a URL's host, an IPv6 literal in brackets or not) is allowed.
    pub(crate) fn allows(&self, host: &str) -> bool {
        let host = normalise(host);
        if let Ok(ip) = host.parse::<IpAddr>() {
            return self.ips.contains(&ip);
        }
        self.names.contains(&host) || self.suffixes.iter().any(|s| host.ends_with(s.as_str()))
    }
}

fn normalise(host: &str) -> String {
    let host = host.trim();
    let host = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    host.trim_end_matches('.').to_ascii_lowercase()
}

/// The client's DNS resolver: the system's answer (`getaddrinfo`, as reqwest's default) with
/// refused addresses dropped unless the name is allowed. When none is left, resolution fails with
/// [`RefusedAddresses`], which [`is_refusal`] recognises; the client never sees the refused
/// addresses, so it cannot connect to them.
///
/// It only works when the client resolves names itself: a proxy would resolve them on its side,
/// so the client must be built with `no_proxy()`.
pub(crate) struct GuardedResolver {
    allow: Arc<AllowList>,
}

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let allow = Arc::clone(&self.allow);
        let host = name.as_str().to_owned();
        Box::pin(async move {
            let found: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let vetted = vet(&allow, &host, found)?;
            Ok(Box::new(vetted.into_iter()) as Addrs)
        })
    }
}

/// The addresses of `host` the client may connect to: all when the host is allowed, else the ones
/// not refused; an error when that leaves none.
pub(crate) fn vet(
    allow: &AllowList,
    host: &str,
    found: Vec<SocketAddr>,
) -> Result<Vec<SocketAddr>, RefusedAddresses> {
    if allow.allows(host) {
        return Ok(found);
    }
    let vetted: Vec<SocketAddr> = found
        .into_iter()
        .filter(|addr| !is_refused(addr.ip()))
        .collect();
    if vetted.is_empty() {
        Err(RefusedAddresses)
    } else {
        Ok(vetted)
    }
}

/// A host name resolved to no address the fetch may connect to (its text is never shown: the
/// fetch reports [`Error::Refused`]).
#[derive(Debug)]
pub(crate) struct RefusedAddresses;

impl fmt::Display for RefusedAddresses {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the host resolves only to refused addresses")
    }
}

impl std::error::Error for RefusedAddresses {}

/// Whether `ip` is this computer, a private or local network, or not a single host: unspecified,
/// loopback, private (RFC 1918, CGNAT, unique-local), link-local, site-local, multicast, broadcast
/// and reserved addresses, and IPv6 addresses that carry a refused IPv4 address (IPv4-mapped,
/// IPv4-compatible, IPv4-translated, NAT64, 6to4).
pub(crate) fn is_refused(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(ip) => is_refused_v4(ip),
        IpAddr::V6(ip) => is_refused_v6(ip),
    }
}

fn is_refused_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    // 0.0.0.0/8 "this network": 0.0.0.0 connects to this computer.
    a == 0
        || a == 10
        || (a == 100 && (64..128).contains(&b))
        || a == 127
        || (a == 169 && b == 254)
        || (a == 172 && (16..32).contains(&b))
        // IETF protocol assignments.
        || (a == 192 && b == 0 && c == 0)
        || (a == 192 && b == 168)
        // Benchmarking, often used as a private network.
        || (a == 198 && (b == 18 || b == 19))
        // Multicast 224/4, reserved 240/4, broadcast 255.255.255.255.
        || a >= 224
}

fn is_refused_v6(ip: Ipv6Addr) -> bool {
    if let Some(v4) = embedded_v4(ip) {
        return is_refused_v4(v4);
    }
    let first = ip.segments()[0];
    ip.is_unspecified()
        || ip.is_loopback()
        // Link-local fe80::/10, site-local fec0::/10 (deprecated, still routed locally).
        || first & 0xffc0 == 0xfe80
        || first & 0xffc0 == 0xfec0
        // Unique-local fc00::/7.
        || first & 0xfe00 == 0xfc00
        // Multicast ff00::/8.
        || first & 0xff00 == 0xff00
        // Local-use NAT64 64:ff9b:1::/48.
        || ip.segments()[..3] == [0x64, 0xff9b, 1]
}

/// The IPv4 address an IPv6 address stands for, in the forms that reach it.
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = ip.segments();
    let last = |high: u16, low: u16| {
        let [a, b] = high.to_be_bytes();
        let [c, d] = low.to_be_bytes();
        Ipv4Addr::new(a, b, c, d)
    };
    match s {
        // IPv4-compatible ::a.b.c.d (:: and ::1 become 0.0.0.0 and 0.0.0.1, both refused).
        [0, 0, 0, 0, 0, 0, h, l] => Some(last(h, l)),
        // IPv4-mapped ::ffff:a.b.c.d.
        [0, 0, 0, 0, 0, 0xffff, h, l] => Some(last(h, l)),
        // IPv4-translated ::ffff:0:a.b.c.d.
        [0, 0, 0, 0, 0xffff, 0, h, l] => Some(last(h, l)),
        // NAT64 64:ff9b::a.b.c.d.
        [0x64, 0xff9b, 0, 0, 0, 0, h, l] => Some(last(h, l)),
        // 6to4 2002:aabb:ccdd::/48.
        [0x2002, h, l, ..] => Some(last(h, l)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused_str(ip: &str) -> bool {
        match ip.parse::<IpAddr>() {
            Ok(ip) => is_refused(ip),
            Err(e) => panic!("{ip}: {e}"),
        }
    }

    #[test]
    fn ipv4_local_and_private_addresses_are_refused() {
        for ip in [
            "0.0.0.0",
            "0.1.2.3",
            "127.0.0.1",
            "127.255.255.254",
            "10.0.0.1",
            "10.255.255.255",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.0.1",
            "192.168.255.255",
            "169.254.169.254",
            "169.254.0.1",
            "100.64.0.1",
            "100.127.255.255",
            "192.0.0.1",
            "198.18.0.1",
            "198.19.255.255",
            "224.0.0.1",
            "239.255.255.250",
            "240.0.0.1",
            "255.255.255.255",
        ] {
            assert!(refused_str(ip), "{ip} should be refused");
        }
    }

    #[test]
    fn ipv4_public_addresses_pass() {
        for ip in [
            "1.1.1.1",
            "8.8.8.8",
            "93.184.216.34",
            "9.255.255.255",
            "11.0.0.0",
            "100.63.255.255",
            "100.128.0.0",
            "126.255.255.255",
            "128.0.0.0",
            "169.253.255.255",
            "169.255.0.0",
            "172.15.255.255",
            "172.32.0.0",
            "192.0.1.1",
            "192.167.255.255",
            "192.169.0.0",
            "198.17.255.255",
            "198.20.0.0",
            "223.255.255.255",
        ] {
            assert!(!refused_str(ip), "{ip} should pass");
        }
    }

    #[test]
    fn ipv6_local_and_private_addresses_are_refused() {
        for ip in [
            "::",
            "::1",
            "fe80::1",
            "febf:ffff::1",
            "fec0::1",
            "fc00::1",
            "fd12:3456:789a::1",
            "ff02::1",
            "ff05::2",
            "64:ff9b:1::1",
        ] {
            assert!(refused_str(ip), "{ip} should be refused");
        }
    }

    #[test]
    fn ipv6_carrying_a_refused_ipv4_address_is_refused() {
        for ip in [
            "::ffff:127.0.0.1",
            "::ffff:7f00:1",
            "::ffff:10.0.0.1",
            "::ffff:192.168.1.1",
            "::ffff:169.254.169.254",
            "::ffff:0.0.0.0",
            "::127.0.0.1",
            "::10.1.2.3",
            "::ffff:0:127.0.0.1",
            "64:ff9b::127.0.0.1",
            "64:ff9b::a9fe:a9fe",
            "2002:7f00:1::",
            "2002:c0a8:101::1",
        ] {
            assert!(refused_str(ip), "{ip} should be refused");
        }
    }

    #[test]
    fn ipv6_public_addresses_pass() {
        for ip in [
            "2606:4700:4700::1111",
            "2001:4860:4860::8888",
            "::ffff:8.8.8.8",
            "::8.8.8.8",
            "64:ff9b::808:808",
            "2002:808:808::1",
            "fbff::1",
            "fe00::1",
        ] {
            assert!(!refused_str(ip), "{ip} should pass");
        }
    }

    fn list(hosts: &[&str]) -> AllowList {
        AllowList::new(&hosts.iter().map(|h| (*h).to_owned()).collect::<Vec<_>>())
    }

    #[test]
    fn the_allow_list_matches_hosts_case_insensitively_and_subdomains_by_star() {
        let allow = list(&[
            "Wiki.LAN",
            "127.0.0.1",
            "[::1]",
            "fd00::2",
            "*.corp.example",
            "docs.local.",
            " ",
        ]);
        for host in [
            "wiki.lan",
            "WIKI.lan.",
            "127.0.0.1",
            "[::1]",
            "::1",
            "[fd00:0::2]",
            "a.corp.example",
            "a.b.corp.example",
            "docs.local",
        ] {
            assert!(allow.allows(host), "{host} should be allowed");
        }
        for host in [
            "localhost",
            "wiki.lan.evil",
            "corp.example",
            "evilcorp.example",
            "127.0.0.2",
            "::ffff:127.0.0.1",
            "",
        ] {
            assert!(!allow.allows(host), "{host} should not be allowed");
        }
        assert!(!AllowList::default().allows("localhost"));
    }

    fn addrs(ips: &[&str]) -> Vec<SocketAddr> {
        ips.iter()
            .filter_map(|ip| ip.parse::<IpAddr>().ok())
            .map(|ip| SocketAddr::new(ip, 0))
            .collect()
    }

    #[test]
    fn the_resolver_keeps_only_vetted_addresses() {
        let none = AllowList::default();
        // A public-looking name whose answer is loopback or private.
        assert!(vet(&none, "example.com", addrs(&["127.0.0.1", "::1"])).is_err());
        assert!(vet(&none, "example.com", addrs(&["::ffff:10.0.0.1"])).is_err());
        assert!(vet(&none, "example.com", Vec::new()).is_err());
        // Mixed answers: only the public one is handed to the client.
        assert_eq!(
            vet(
                &none,
                "example.com",
                addrs(&["127.0.0.1", "93.184.216.34", "fe80::1"])
            )
            .ok(),
            Some(addrs(&["93.184.216.34"]))
        );
        // An allowed name gets every address.
        let allow = list(&["wiki.lan"]);
        assert_eq!(
            vet(&allow, "WIKI.lan", addrs(&["192.168.1.10", "::1"])).ok(),
            Some(addrs(&["192.168.1.10", "::1"]))
        );
        // An allowed IP does not allow a name that resolves to it.
        let ip = list(&["127.0.0.1"]);
        assert!(vet(&ip, "localhost", addrs(&["127.0.0.1"])).is_err());
    }

    #[tokio::test]
    async fn the_resolver_refuses_localhost() {
        let guard = Guard::new(&[]);
        let name = match "localhost".parse::<Name>() {
            Ok(name) => name,
            Err(e) => panic!("{e:?}"),
        };
        let result = guard.resolver().resolve(name).await;
        match result {
            Err(e) => assert!(e.is::<RefusedAddresses>(), "{e}"),
            Ok(found) => panic!("localhost resolved to {:?}", found.collect::<Vec<_>>()),
        }
    }

    #[test]
    fn ip_literal_hosts_are_checked_before_any_request() -> Result<(), url::ParseError> {
        let guard = Guard::new(&["127.0.0.1".to_owned(), "::1".to_owned()]);
        for url in [
            "http://10.0.0.1/",
            "http://192.168.1.1/",
            "http://169.254.169.254/latest/meta-data/",
            "http://0.0.0.0/",
            "http://127.0.0.2/",
            "http://2130706434/",
            "http://[::ffff:127.0.0.1]/",
        ] {
            let url = Url::parse(url)?;
            assert_eq!(guard.check_literal(&url), Err(refused(&url)), "{url}");
        }
        for url in [
            "http://127.0.0.1:8080/",
            "http://127.1/",
            "http://2130706433/",
            "http://[::1]/",
            "https://8.8.8.8/",
            "https://localhost/",
            "https://example.com/",
        ] {
            let url = Url::parse(url)?;
            assert_eq!(guard.check_literal(&url), Ok(()), "{url}");
        }
        Ok(())
    }
}
