#[test]
fn stub() {
    let _ = oxigraph::store::Store::new().unwrap();
}
