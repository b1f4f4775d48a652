//! Which endpoints a server may call: none (the default of `quiver serve`, since a query
//! could otherwise make the server reach any host its network can), any, or those on an
//! allow-list of hosts.

/// The endpoints SERVICE may reach.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Allow {
    /// None; `hint` says how to allow them (it ends the refusal's message).
    Nothing { hint: String },
    /// Any endpoint.
    Any,
    /// Endpoints on these hosts: `host` (any port) or `host:port`, case-insensitive.
    Hosts(Vec<String>),
}

impl Allow {
    /// An allow-list from `host,host:port,…` (empty entries ignored).
    pub fn hosts(list: &str) -> Self {
        Allow::Hosts(
            list.split(',')
                .map(|h| h.trim().to_ascii_lowercase())
                .filter(|h| !h.is_empty())
                .collect(),
        )
    }

    /// `Ok` when the endpoint at `uri` may be called (its port, when not given, the
    /// scheme's: 443 for `https:`, else 80), else why not.
    pub fn check_uri(&self, uri: &hyper::Uri) -> Result<(), String> {
        let default_port = if uri.scheme_str() == Some("https") {
            443
        } else {
            80
        };
        self.check(
            uri.host().unwrap_or(""),
            uri.port_u16().unwrap_or(default_port),
        )
    }

    /// `Ok` when an endpoint on `host` and `port` may be called, else why not.
    pub fn check(&self, host: &str, port: u16) -> Result<(), String> {
        match self {
            Allow::Any => Ok(()),
            Allow::Nothing { hint } => Err(format!("outgoing requests are off ({hint})")),
            Allow::Hosts(hosts) => {
                let host = host.to_ascii_lowercase();
                let with_port = format!("{host}:{port}");
                if hosts.iter().any(|h| *h == host || *h == with_port) {
                    Ok(())
                } else {
                    Err(format!(
                        "host {with_port} is not on the allow-list ({})",
                        hosts.join(",")
                    ))
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_match_hosts_with_or_without_ports() {
        let allow = Allow::hosts("Example.org, localhost:7878,");
        assert!(allow.check("example.org", 80).is_ok());
        assert!(allow.check("EXAMPLE.ORG", 8080).is_ok());
        assert!(allow.check("localhost", 7878).is_ok());
        let refused = allow.check("localhost", 7879).unwrap_err();
        assert!(refused.contains("localhost:7879"), "{refused}");
        assert!(allow.check("example.com", 80).is_err());
        assert!(Allow::Any.check("anything", 1).is_ok());
        let https: hyper::Uri = "https://localhost/sparql".parse().unwrap();
        let listed = Allow::hosts("localhost:443");
        assert!(listed.check_uri(&https).is_ok());
        assert!(listed
            .check_uri(&"http://localhost/sparql".parse().unwrap())
            .is_err());
        let off = Allow::Nothing {
            hint: "start with --allow-service".into(),
        };
        assert!(off.check("a", 80).unwrap_err().contains("--allow-service"));
    }
}
