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

/**
 * Two more self-signed pairs, made the same way (EC P-256, IP:127.0.0.1 and DNS:localhost,
 * CA:TRUE, 2000..2100) but with both the serverAuth and clientAuth key usages, so each can
 * serve, be trusted as a CA, or be a client certificate. Tests use them to rotate a server
 * certificate (and the CA file that trusts it) or a client certificate on disk.
 * TEST ONLY, like the pair above.
 */
export const TEST_TLS_CERT_B = `-----BEGIN CERTIFICATE-----
MIIBsDCCAVagAwIBAgIBATAKBggqhkjOPQQDAjAhMR8wHQYDVQQDDBZyeC1pbmZv
cm1lci1lbXVsYXRvci1iMCAXDTAwMDEwMTAwMDAwMFoYDzIxMDAwMTAxMDAwMDAw
WjAhMR8wHQYDVQQDDBZyeC1pbmZvcm1lci1lbXVsYXRvci1iMFkwEwYHKoZIzj0C
AQYIKoZIzj0DAQcDQgAEjyv5FhxQpNvtRaLHhN4n5eU+gSqqsrATWTi5JgvpnLDa
JUP8jwQddk1CVBWmKHIhteuGH8GRxHee+vXKSgUHzqN9MHswGgYDVR0RBBMwEYcE
fwAAAYIJbG9jYWxob3N0MA8GA1UdEwEB/wQFMAMBAf8wDgYDVR0PAQH/BAQDAgKE
MB0GA1UdJQQWMBQGCCsGAQUFBwMBBggrBgEFBQcDAjAdBgNVHQ4EFgQUGtm4v6cK
nyIKHHEoSb3QA/fd/ZkwCgYIKoZIzj0EAwIDSAAwRQIhAKSkuSqEvwz6TT0YHiPv
GFxgFZoVg6WBjggdHfRG1/vDAiBCsUANUoGKruGn1LkNI1Wczck0hrXqc0a3aQp3
SCiPNA==
-----END CERTIFICATE-----
`;

export const TEST_TLS_KEY_B = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgnTjbhfQD8b9dq7JS
NwOPWnCu2ltLTzWQSzE7AxiC1l6hRANCAASPK/kWHFCk2+1FoseE3ifl5T6BKqqy
sBNZOLkmC+mcsNolQ/yPBB12TUJUFaYociG164YfwZHEd5769cpKBQfO
-----END PRIVATE KEY-----
`;

export const TEST_TLS_CERT_C = `-----BEGIN CERTIFICATE-----
MIIBsDCCAVagAwIBAgIBAjAKBggqhkjOPQQDAjAhMR8wHQYDVQQDDBZyeC1pbmZv
cm1lci1lbXVsYXRvci1jMCAXDTAwMDEwMTAwMDAwMFoYDzIxMDAwMTAxMDAwMDAw
WjAhMR8wHQYDVQQDDBZyeC1pbmZvcm1lci1lbXVsYXRvci1jMFkwEwYHKoZIzj0C
AQYIKoZIzj0DAQcDQgAEapLdeNsUzuFM6cDR63LPkbKab1WGYvKVzFs7JgiIPHAo
ZMQGjJ2eCNF89Ln3hfNmWIeQ4CU8K1OpVFXtBtuBJaN9MHswGgYDVR0RBBMwEYcE
fwAAAYIJbG9jYWxob3N0MA8GA1UdEwEB/wQFMAMBAf8wDgYDVR0PAQH/BAQDAgKE
MB0GA1UdJQQWMBQGCCsGAQUFBwMBBggrBgEFBQcDAjAdBgNVHQ4EFgQUGxFiMKvc
rPLCLh3JRXpEeUt4cCgwCgYIKoZIzj0EAwIDSAAwRQIgOHNrrzK/iXgOjuhotRWC
7QOWxF0Z7GUQLoo8GaZhlJUCIQCz0INjPaW22J6LGnp91pBAeZbC9irz2UfYTaQx
MZwpmw==
-----END CERTIFICATE-----
`;

export const TEST_TLS_KEY_C = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgp89B7dEFUU1RrwS0
YrBFDslswhsQWrmUIaMLm36z/7+hRANCAARqkt142xTO4UzpwNHrcs+RsppvVYZi
8pXMWzsmCIg8cChkxAaMnZ4I0Xz0ufeF82ZYh5DgJTwrU6lUVe0G24El
-----END PRIVATE KEY-----
`;
