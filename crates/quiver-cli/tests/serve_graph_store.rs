//! The SPARQL 1.1 Graph Store Protocol of `quiver serve --writable` against a real server
//! on loopback: statuses, contents in every format, errors, one transaction per write,
//! queries seeing the writes, and a response streaming the version its request started on.

use crate::serve_support;

use serve_support::writes::*;

use oxrdf::Graph;
use oxrdfio::RdfFormat;
use serve_support::Server;

#[test]
fn graph_store_statuses_and_contents() {
    let server = writable("gsp");
    let g = graph_param("http://e/g1");
    let person = "@prefix : <http://e/> . :carol :knows [ :name \"Dan\" ] .";
    // PUT of a new graph: 201; GET gives it back; a query sees it.
    let reply = call(
        &server,
        "PUT",
        &format!("/store?{g}"),
        &[("Content-Type", TURTLE)],
        person.as_bytes(),
    );
    assert_status(&reply, 201);
    assert_eq!(get_graph(&server, &g), turtle(person));
    assert!(ask(&server, "ASK { GRAPH <http://e/g1> { <http://e/carol> <http://e/knows> [ <http://e/name> \"Dan\" ] } }"));
    // PUT again replaces (204): the old triples are gone.
    let replaced =
        "<http://e/carol> <http://e/age> \"42\"^^<http://www.w3.org/2001/XMLSchema#integer> .";
    let reply = call(
        &server,
        "PUT",
        &format!("/store?{g}"),
        &[("Content-Type", "application/n-triples")],
        replaced.as_bytes(),
    );
    assert_status(&reply, 204);
    assert_eq!(get_graph(&server, &g), turtle(replaced));
    // POST merges (204 on an existing graph, 201 on a new one).
    let more = "<http://e/carol> <http://e/name> \"Carol\"@en .";
    let reply = call(
        &server,
        "POST",
        &format!("/store?{g}"),
        &[("Content-Type", TURTLE)],
        more.as_bytes(),
    );
    assert_status(&reply, 204);
    assert_eq!(
        get_graph(&server, &g),
        turtle(&format!("{replaced}\n{more}"))
    );
    let g2 = graph_param("http://e/g2");
    let reply = call(
        &server,
        "POST",
        &format!("/store?{g2}"),
        &[("Content-Type", TURTLE)],
        more.as_bytes(),
    );
    assert_status(&reply, 201);
    // Other formats of the same graph.
    let expected = turtle(&format!("{replaced}\n{more}"));
    for (accept, format, content_type) in [
        (
            "application/n-triples",
            RdfFormat::NTriples,
            "application/n-triples",
        ),
        (
            "application/rdf+xml",
            RdfFormat::RdfXml,
            "application/rdf+xml",
        ),
        (
            "application/n-quads",
            RdfFormat::NQuads,
            "application/n-quads",
        ),
        (
            "application/ld+json",
            RdfFormat::JsonLd {
                profile: oxrdfio::JsonLdProfileSet::empty(),
            },
            "application/ld+json",
        ),
    ] {
        let reply = server.get(&format!("/store?{g}"), &[("Accept", accept)]);
        assert_status(&reply, 200);
        assert_eq!(reply.header("content-type"), Some(content_type));
        assert_eq!(graph(&reply.body, format), expected, "{accept}");
    }
    // A JSON-LD body: PUT, then read back as Turtle.
    let g3 = graph_param("http://e/g3");
    let document = br#"{"@id": "http://e/dana", "http://e/name": "Dana"}"#;
    let reply = call(
        &server,
        "PUT",
        &format!("/store?{g3}"),
        &[("Content-Type", "application/ld+json")],
        document,
    );
    assert_status(&reply, 201);
    let reply = server.get(&format!("/store?{g3}"), &[("Accept", TURTLE)]);
    assert_eq!(
        graph(&reply.body, RdfFormat::Turtle),
        turtle("<http://e/dana> <http://e/name> \"Dana\" ."),
        "{}",
        reply.text()
    );
    assert_status(
        &call(&server, "DELETE", &format!("/store?{g3}"), &[], b""),
        204,
    );
    // N-Quads keeps the graph's name.
    let reply = server.get(&format!("/store?{g}"), &[("Accept", "application/n-quads")]);
    assert!(reply.text().contains("<http://e/g1> ."), "{}", reply.text());
    assert_status(
        &server.get(&format!("/store?{g}"), &[("Accept", "application/json")]),
        406,
    );
    // HEAD: 200 with the content type and no body; 404 for a missing graph.
    let head = call(
        &server,
        "HEAD",
        &format!("/store?{g}"),
        &[("Accept", "text/turtle")],
        b"",
    );
    assert_status(&head, 200);
    assert_eq!(head.header("content-type"), Some(TURTLE));
    assert!(head.body.is_empty());
    let missing = graph_param("http://e/missing");
    assert_status(
        &call(&server, "HEAD", &format!("/store?{missing}"), &[], b""),
        404,
    );
    assert_status(&server.get(&format!("/store?{missing}"), &[]), 404);
    // DELETE: 204, then the graph is gone (404 for GET and for a second DELETE).
    assert_status(
        &call(&server, "DELETE", &format!("/store?{g2}"), &[], b""),
        204,
    );
    assert_status(&server.get(&format!("/store?{g2}"), &[]), 404);
    assert_status(
        &call(&server, "DELETE", &format!("/store?{g2}"), &[], b""),
        404,
    );
    assert!(!ask(&server, "ASK { GRAPH <http://e/g2> { ?s ?p ?o } }"));
    // The default graph: GET, PUT replaces it (204: it always exists), DELETE empties it.
    assert_eq!(
        get_graph(&server, "default"),
        graph(SEED.as_bytes(), RdfFormat::NTriples)
    );
    let reply = call(
        &server,
        "PUT",
        "/store?default",
        &[("Content-Type", TURTLE)],
        b"<http://e/x> <http://e/y> <http://e/z> .",
    );
    assert_status(&reply, 204);
    assert_eq!(
        get_graph(&server, "default"),
        turtle("<http://e/x> <http://e/y> <http://e/z> .")
    );
    assert!(ask(
        &server,
        "ASK { <http://e/x> <http://e/y> <http://e/z> }"
    ));
    assert!(!ask(&server, "ASK { <http://e/alice> ?p ?o }"));
    // The whole store in N-Quads.
    let reply = server.get("/store", &[]);
    assert_status(&reply, 200);
    assert_eq!(reply.header("content-type"), Some("application/n-quads"));
    let all = format!(
        "<http://e/x> <http://e/y> <http://e/z> .\n{}",
        format!("{replaced}\n{more}\n").replace(" .\n", " <http://e/g1> .\n")
    );
    assert_eq!(
        dataset(&reply.body, RdfFormat::NQuads),
        dataset(all.as_bytes(), RdfFormat::NQuads)
    );
    assert_status(&call(&server, "DELETE", "/store?default", &[], b""), 204);
    assert_eq!(get_graph(&server, "default"), Graph::new());
    // Relative IRIs in a body resolve against the graph's IRI.
    let reply = call(
        &server,
        "PUT",
        &format!("/store?{g}"),
        &[("Content-Type", TURTLE)],
        b"<a> <b> <c> .",
    );
    assert_status(&reply, 204);
    assert_eq!(
        get_graph(&server, &g),
        turtle("<http://e/a> <http://e/b> <http://e/c> .")
    );
    // Blank nodes of two requests are two nodes.
    for _ in 0..2 {
        let reply = call(
            &server,
            "POST",
            "/store?default",
            &[("Content-Type", TURTLE)],
            b"_:b <http://e/p> 1 .",
        );
        assert_status(&reply, 204);
    }
    let reply = server.query(
        "SELECT (COUNT(DISTINCT ?s) AS ?n) { ?s <http://e/p> 1 }",
        "text/csv",
    );
    assert_eq!(reply.text().lines().nth(1), Some("2"), "{}", reply.text());
    let status = server.status();
    assert!(status["writable"].as_bool().unwrap());
    assert!(
        status["writes_committed"].as_u64().unwrap() >= 10,
        "{status}"
    );
}

#[test]
fn graph_store_errors() {
    let server = writable("gsp-errors");
    let g = graph_param("http://e/g");
    let put = |path: &str, content_type: &str, body: &str| {
        call(
            &server,
            "PUT",
            path,
            &[("Content-Type", content_type)],
            body.as_bytes(),
        )
    };
    // A syntax error: 400 with the line and column.
    let reply = put(
        &format!("/store?{g}"),
        TURTLE,
        "<http://a> <http://b> <http://c> .\n<http://a> <http://b> .\n",
    );
    assert_status(&reply, 400);
    assert!(reply.text().contains("line 2"), "{}", reply.text());
    assert_status(&server.get(&format!("/store?{g}"), &[]), 404);
    // Unsupported media types: 415.
    assert_status(&put(&format!("/store?{g}"), "application/json", "{}"), 415);
    assert_status(
        &call(
            &server,
            "PUT",
            &format!("/store?{g}"),
            &[],
            b"<http://a> <http://b> <http://c> .",
        ),
        415,
    );
    // A quad in a named graph sent to a graph: 400, nothing written.
    let quad = "<http://a> <http://b> <http://c> <http://other> .";
    assert_status(
        &put(&format!("/store?{g}"), "application/n-quads", quad),
        400,
    );
    assert_status(&server.get(&format!("/store?{g}"), &[]), 404);
    // Quads in the default graph of an N-Quads body are triples.
    assert_status(
        &put(
            &format!("/store?{g}"),
            "application/n-quads",
            "<http://a> <http://b> <http://c> .",
        ),
        201,
    );
    // Targets: none (for a write), both, two graphs, not an IRI.
    for query in [
        "",
        "?default&graph=http://a",
        "?graph=http://a&graph=http://b",
        "?graph=not%20an%20iri",
    ] {
        assert_status(&put(&format!("/store{query}"), TURTLE, ""), 400);
    }
    assert_status(
        &call(&server, "PATCH", &format!("/store?{g}"), &[], b""),
        405,
    );
    // The store is intact after the refusals.
    assert_eq!(
        get_graph(&server, "default"),
        graph(SEED.as_bytes(), RdfFormat::NTriples)
    );
}

/// A Graph Store GET streams the version it started on: a PUT that replaces the graph while
/// the response is only partly read does not show through, and the next GET sees the new
/// content. The graph is large enough (~10 MB as N-Triples) that the serializer is still
/// blocked on the unread response when the PUT commits, which the server's log confirms.
#[test]
fn a_response_streams_the_version_its_request_started_on() {
    use std::io::Read;
    let dir = store("isolation");
    let server = Server::start(&dir, &["--writable", "--max-body-bytes", "64M"]);
    let g = format!("/store?{}", graph_param("http://e/big"));
    let triples = |tag: &str| {
        (0..200_000)
            .map(|i| format!("<http://e/s{i}> <http://e/{tag}> \"{i}\" .\n"))
            .collect::<String>()
    };
    let (old, new) = (triples("old"), triples("new"));
    let nt = [("Content-Type", "application/n-triples")];
    assert_status(&call(&server, "PUT", &g, &nt, old.as_bytes()), 201);
    let mut stream = serve_support::send(
        &server.address,
        "GET",
        &g,
        &[("Accept", "application/n-triples")],
        b"",
    );
    let mut raw = vec![0u8; 8192];
    let mut read = 0;
    while read < 4096 {
        let n = stream.read(&mut raw[read..]).expect("the response starts");
        assert!(n > 0, "the response ended early");
        read += n;
    }
    raw.truncate(read);
    assert_status(&call(&server, "PUT", &g, &nt, new.as_bytes()), 204);
    assert!(server.logged("graph store write committed"));
    assert!(
        !server.log().contains("graph sent"),
        "the first response was complete before the PUT: the test proves nothing\n{}",
        server.log()
    );
    stream
        .read_to_end(&mut raw)
        .expect("the rest of the response");
    let reply = serve_support::parse_reply(&raw);
    assert_status(&reply, 200);
    assert!(reply.complete);
    let first = graph(&reply.body, RdfFormat::NTriples);
    assert_eq!(first, graph(old.as_bytes(), RdfFormat::NTriples));
    let reply = server.get(&g, &[("Accept", "application/n-triples")]);
    assert_eq!(
        graph(&reply.body, RdfFormat::NTriples),
        graph(new.as_bytes(), RdfFormat::NTriples)
    );
}

#[test]
fn graphs_named_by_their_url_and_created_by_post_to_the_store() {
    let server = writable("gsp-direct");
    let base = format!("http://{}", server.address);
    let people = "<http://e/erin> <http://e/name> \"Erin\" .";
    // Direct identification: /store/people is the graph <http://HOST/store/people>.
    let reply = call(
        &server,
        "PUT",
        "/store/people",
        &[("Content-Type", TURTLE)],
        people.as_bytes(),
    );
    assert_status(&reply, 201);
    let name = format!("{base}/store/people");
    assert_eq!(get_graph(&server, &graph_param(&name)), turtle(people));
    let direct = server.get("/store/people", &[("Accept", "text/turtle")]);
    assert_status(&direct, 200);
    assert_eq!(graph(&direct.body, RdfFormat::Turtle), turtle(people));
    assert!(ask(
        &server,
        &format!("ASK {{ GRAPH <{name}> {{ <http://e/erin> ?p ?o }} }}")
    ));
    // A URL naming its graph takes no graph parameter.
    let reply = server.get("/store/people?default", &[]);
    assert_status(&reply, 400);
    // POST to the store itself: a new graph, named by the server, in Location.
    let reply = call(
        &server,
        "POST",
        "/store",
        &[("Content-Type", TURTLE)],
        people.as_bytes(),
    );
    assert_status(&reply, 201);
    let location = reply.header("location").expect("Location").to_owned();
    assert!(
        location.starts_with(&format!("{base}/store/")),
        "{location}"
    );
    assert_ne!(location, name);
    assert_eq!(get_graph(&server, &graph_param(&location)), turtle(people));
    let path = location.strip_prefix(&base).unwrap();
    assert_eq!(
        graph(
            &server.get(path, &[("Accept", "text/turtle")]).body,
            RdfFormat::Turtle
        ),
        turtle(people)
    );
    // A second POST makes another graph.
    let again = call(
        &server,
        "POST",
        "/store",
        &[("Content-Type", TURTLE)],
        people.as_bytes(),
    );
    assert_status(&again, 201);
    assert_ne!(again.header("location"), Some(location.as_str()));
    // DELETE by URL drops it: then 404.
    assert_status(&call(&server, "DELETE", path, &[], b""), 204);
    assert_status(&server.get(path, &[]), 404);
}

/// RDF 1.2 through the Graph Store Protocol: triple terms stored and given back; a body
/// whose triple terms nest 5,000 deep (which would overflow the parser's stack) is a
/// 400 naming where, and the server goes on serving.
#[test]
fn triple_terms_go_in_and_out_and_deep_ones_are_refused() {
    let server = writable("gsp-rdf12");
    let g = graph_param("http://e/g12");
    let data = "@prefix : <http://e/> . :a :said <<( :b :age 23 )>> . :b :name \"Bob\"@en--ltr .";
    let reply = call(
        &server,
        "PUT",
        &format!("/store?{g}"),
        &[("Content-Type", TURTLE)],
        data.as_bytes(),
    );
    assert_status(&reply, 201);
    assert_eq!(get_graph(&server, &g), turtle(data));
    let levels = 5_000;
    let term = format!(
        "{}<http://e/o>{}",
        "<<( <http://e/s> <http://e/p> ".repeat(levels),
        " )>>".repeat(levels)
    );
    let deep =
        format!("<http://e/a> <http://e/b> <http://e/c> .\n<http://e/a> <http://e/b> {term} .\n");
    let reply = call(
        &server,
        "POST",
        &format!("/store?{g}"),
        &[("Content-Type", "application/n-triples")],
        deep.as_bytes(),
    );
    assert_status(&reply, 400);
    let body = reply.text();
    assert!(
        body.contains("line 2") && body.contains("nested more than 64 deep"),
        "{body}"
    );
    // Nothing of the refused body was written, and the server still answers.
    assert_eq!(get_graph(&server, &g), turtle(data));
}
