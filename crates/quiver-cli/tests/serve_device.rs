//! `quiver serve --device gpu`: the server opens the device at start and answers with the
//! CPU's rows (the device path on the host backend, `QUIVER_DEVICE_BACKEND=host`).

use crate::serve_support;

use serve_support::{cli_query, lubm_query, store, Server};

fn sorted_lines(bytes: &[u8]) -> Vec<String> {
    let mut lines: Vec<String> = String::from_utf8_lossy(bytes)
        .lines()
        .map(str::to_owned)
        .collect();
    lines.sort();
    lines
}

#[test]
fn a_server_on_the_device_answers_like_the_cpu() {
    let store = store("device");
    let server = Server::start_with_env(
        store,
        &["--device", "gpu", "--gpu-min-work", "1"],
        &[("QUIVER_DEVICE_BACKEND", "host")],
    );
    assert!(server.logged("graph index resident"), "{}", server.log());
    for name in ["q2", "q7", "q8", "q12"] {
        let query = lubm_query(name);
        let reply = server.query(&query, "text/tab-separated-values");
        assert_eq!(reply.status, 200, "{name}: {}", reply.text());
        let expected = cli_query(store, &query, "tsv");
        assert_eq!(sorted_lines(&reply.body), sorted_lines(&expected), "{name}");
        assert!(expected.len() > 100, "{name}");
    }
    let status = server.status();
    assert!(
        status["device"]["name"]
            .as_str()
            .unwrap()
            .starts_with("host"),
        "{status}"
    );
    assert!(
        status["device"]["runs"].as_u64().unwrap() >= 4,
        "{status}\n{}",
        server.log()
    );
}
