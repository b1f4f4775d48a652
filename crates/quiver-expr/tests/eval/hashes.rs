//! Hash functions (§17.4.6) against known digests (RFC test vectors and W3C tests).

use crate::{check, check_error};

#[test]
fn digests_of_abc() {
    check("MD5(\"abc\")", "\"900150983cd24fb0d6963f7d28e17f72\"");
    check(
        "SHA1(\"abc\")",
        "\"a9993e364706816aba3e25717850c26c9cd0d89d\"",
    );
    check(
        "SHA256(\"abc\")",
        "\"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad\"",
    );
    check(
        "SHA384(\"abc\")",
        "\"cb00753f45a35e8bb5a03d699ac65007272c32ab0eded1631a8b605a43ff5bed8086072ba1e7cc2358baeca134c825a7\"",
    );
    check(
        "SHA512(\"abc\")",
        "\"ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f\"",
    );
}

#[test]
fn w3c_vectors() {
    check("MD5(\"\")", "\"d41d8cd98f00b204e9800998ecf8427e\"");
    check("MD5(\"foo\")", "\"acbd18db4cc2f85cedef654fccc4a4d8\"");
    check(
        "SHA256(\"foo\")",
        "\"2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae\"",
    );
    // UTF-8 input.
    check("MD5(\"食べ物\")", "\"e7ada485d13b1decf628c9211bc3a97b\"");
    check(
        "SHA1(\"食\")",
        "\"d46696735b6a09ff407bfc1a9407e008840db9c9\"",
    );
    check(
        "SHA256(\"食\")",
        "\"0fbe868d1df356ca9df7ebff346da3a56280e059a7ea81186ef885b140d254ee\"",
    );
    check(
        "SHA384(\"食\")",
        "\"adfda7e9ad8789b391855038d0d74dce3efe3af1eefcea35d50b91d6c244a0c546375445b518c9fb61e03e6a060bc95d\"",
    );
    check(
        "SHA512(\"食\")",
        "\"b433ed0e60c818bea72d3aa1a43db89b3ed2b624597407b7912bbb7685f2e45ae5500e092da5f938391d282b26bc43e4035b12460c93ab5e2e1a05d582331d85\"",
    );
}

#[test]
fn arguments() {
    check(
        "MD5(\"abc\"^^xsd:string)",
        "\"900150983cd24fb0d6963f7d28e17f72\"",
    );
    check_error("MD5(\"abc\"@en)");
    check_error("SHA1(1)");
    check_error("SHA256(<http://example.org/>)");
    check_error("SHA512(?unbound)");
}
