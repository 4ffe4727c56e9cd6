#!/bin/sh
# Test certificates, made at run time with the openssl command (nothing secret is committed), in the
# current folder or the one given:
#   ca.pem        private CA of server, expired and wronghost
#   ca2.pem       CA of the client certificate client.pem (client.key; client-encrypted.key under
#                 the password $SESSIONFETCHER_TEST_KEY_PASSWORD, default open-sesame)
#   other-ca.pem  a CA of its own for foreign
#   server.pem    localhost and 127.0.0.1, 30 days; expired.pem: the same names, expired in 2020;
#                 wronghost.pem: other.example only
#   server.pin    the sha256// pin (base64) of server's key
# Used by the TLS tests (TLSFixtures) and by .ci/servers.sh for nginx over TLS.
[ -n "${1:-}" ] && cd "$1"
set -e
cat > ca.cnf <<'CNF'
[ ca ]
default_ca = test_ca
[ test_ca ]
database = index.txt
unique_subject = no
new_certs_dir = .
serial = serial
default_md = sha256
policy = any
copy_extensions = copy
[ any ]
commonName = supplied
CNF
: > index.txt; echo 01 > serial
key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:prime256v1 -out "$1"; }
root() { key "$1.key"; openssl req -x509 -new -key "$1.key" -out "$1.pem" -days 30 -subj "/CN=$2"; }
leaf() {
  name=$1; ca=$2; ext=$3; shift 3
  key "$name.key"
  openssl req -new -key "$name.key" -out "$name.csr" -subj "/CN=$name" -addext "$ext"
  openssl ca -batch -config ca.cnf -cert "$ca.pem" -keyfile "$ca.key" -in "$name.csr" \
    -out "$name.pem" -notext "$@"
}
root ca "SessionFetcher Test CA"
root ca2 "SessionFetcher Test Client CA"
root other-ca "SessionFetcher Other CA"
leaf server ca "subjectAltName=DNS:localhost,IP:127.0.0.1" -days 30
leaf expired ca "subjectAltName=DNS:localhost,IP:127.0.0.1" \
  -startdate 20200101000000Z -enddate 20200102000000Z
leaf wronghost ca "subjectAltName=DNS:other.example" -days 30
leaf foreign other-ca "subjectAltName=DNS:localhost,IP:127.0.0.1" -days 30
leaf client ca2 "extendedKeyUsage=clientAuth" -days 30
openssl pkey -in client.key -out client-encrypted.key -aes256 -passout pass:${SESSIONFETCHER_TEST_KEY_PASSWORD:-open-sesame}
openssl x509 -in server.pem -pubkey -noout | openssl pkey -pubin -outform der \
  | openssl dgst -sha256 -binary | openssl enc -base64 > server.pin
