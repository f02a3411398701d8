/**
 * A pre-generated, long-lived self-signed certificate for the emulator's TLS mode.
 *
 * - EC P-256, CN=rx-informer-emulator, subjectAltName IP:127.0.0.1 and DNS:localhost,
 *   CA:TRUE (it is its own trust anchor), valid 2000-01-01 .. 2100-01-01.
 * - TEST ONLY: the private key is public. Never use it for anything but 127.0.0.1 tests.
 *
 * Regenerate with openssl (`openssl ca -selfsign -startdate … -enddate …`) if ever needed;
 * or pass your own `tls: { cert, key }` to startApiServer.
 */
export const TEST_TLS_CERT = `-----BEGIN CERTIFICATE-----
MIIBozCCAUigAwIBAgIBATAKBggqhkjOPQQDAjAfMR0wGwYDVQQDDBRyeC1pbmZv
cm1lci1lbXVsYXRvcjAgFw0wMDAxMDEwMDAwMDBaGA8yMTAwMDEwMTAwMDAwMFow
HzEdMBsGA1UEAwwUcngtaW5mb3JtZXItZW11bGF0b3IwWTATBgcqhkjOPQIBBggq
hkjOPQMBBwNCAAT1Q1fBgsTvYBvNmmwKKyGxTxjNXROCVbNX8fq2WlUgNPsRjapk
bKvJU/FWWomE4f9FXm02J+94Ef3jLq/IMVdCo3MwcTAaBgNVHREEEzARhwR/AAAB
gglsb2NhbGhvc3QwDwYDVR0TAQH/BAUwAwEB/zAOBgNVHQ8BAf8EBAMCAoQwEwYD
VR0lBAwwCgYIKwYBBQUHAwEwHQYDVR0OBBYEFD9/tBDr51nhnGp38nMujbXiNIck
MAoGCCqGSM49BAMCA0kAMEYCIQC9qk/FlVAyAc4d+UMqieCbznLKnS1YSMpb4sz/
55BRnQIhAMmqCiHySEhxohAvMkRLTX1bCBelcLscVidDLfBaRbDH
-----END CERTIFICATE-----
`;

export const TEST_TLS_KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgI6Ts9ShaQg7Od1NR
o6FG0fRQtUDNrIvlSh8VKsRLci2hRANCAAT1Q1fBgsTvYBvNmmwKKyGxTxjNXROC
VbNX8fq2WlUgNPsRjapkbKvJU/FWWomE4f9FXm02J+94Ef3jLq/IMVdC
-----END PRIVATE KEY-----
`;
