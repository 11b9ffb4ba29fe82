// HPKE single shot on WebCrypto (Web/static/wire/hpke.js) against RFC 9180's test vectors, base mode
// (mode 0), DHKEM(X25519, HKDF-SHA256) (KEM 0x0020), HKDF-SHA256 (KDF 0x0001):
// - AES-128-GCM (AEAD 0x0001): RFC 9180, Appendix A.1.1 (printed in the RFC);
// - AES-256-GCM (AEAD 0x0002), coplay's suite: the RFC's test vector file (test-vectors.json of the
//   CFRG's draft-irtf-cfrg-hpke repository, from which Appendix A is taken; this suite is in the file,
//   not printed in the RFC), as swift-crypto carries it in Tests/CryptoTests/HPKE/hpke-test-vectors.json.
// The first encryption of each (sequence 0, so the single-shot nonce; aad "Count-0"). Boxes sealed by
// Swift's `Sealing` are opened in removal.test.mjs (Tests/Vectors/removal/removal.json).

import { test } from "node:test";
import assert from "node:assert/strict";

import { fromHex, toHex, utf8 } from "../../Web/static/wire/bytes.js";
import { HPKEError, HPKE_AEAD, importX25519PrivateKey, openSingleShot, sealSingleShot } from "../../Web/static/wire/hpke.js";

const VECTORS = [
  {
    name: "RFC 9180 A.1.1: X25519, HKDF-SHA256, AES-128-GCM",
    aead: HPKE_AEAD.aes128GCM,
    info: "4f6465206f6e2061204772656369616e2055726e",
    skRm: "4612c550263fc8ad58375df3f557aac531d26850903e55a9f23f21d8534e8ac8",
    pkRm: "3948cfe0ad1ddb695d780e59077195da6c56506b027329794ab02bca80815c4d",
    skEm: "52c4a758a802cd8b936eceea314432798d5baf2d7e9235dc084ab1b9cfa2f736",
    enc: "37fda3567bdbd628e88668c3c8d7e97d1d1253b6d4ea6d44c150f741f1bf4431",
    aad: "436f756e742d30",
    pt: "4265617574792069732074727574682c20747275746820626561757479",
    ct: "f938558b5d72f1a23810b4be2ab4f84331acc02fc97babc53a52ae8218a355a96d8770ac83d07bea87e13c512a",
  },
  {
    name: "RFC 9180 test vectors: X25519, HKDF-SHA256, AES-256-GCM (mode 0, KEM 0x0020, KDF 0x0001, AEAD 0x0002)",
    aead: HPKE_AEAD.aes256GCM,
    info: "4f6465206f6e2061204772656369616e2055726e",
    skRm: "497b4502664cfea5d5af0b39934dac72242a74f8480451e1aee7d6a53320333d",
    pkRm: "430f4b9859665145a6b1ba274024487bd66f03a2dd577d7753c68d7d7d00c00c",
    skEm: "179d4b53b6365c45b600c4163b61d95cbc2f4d9e36f1695558dce265ab8bab11",
    enc: "6c93e09869df3402d7bf231bf540fadd35cd56be14f97178f0954db94b7fc256",
    aad: "436f756e742d30",
    pt: "4265617574792069732074727574682c20747275746820626561757479",
    ct: "e5d84cd531cfb583096e7cfa9641bd3079cf3a91cda813c52deb5f512be9931980a41de125a925cdad859d5b7a",
  },
];

for (const v of VECTORS) {
  test(`opens ${v.name}`, async () => {
    const privateKey = await importX25519PrivateKey(fromHex(v.skRm));
    const plaintext = await openSingleShot({
      privateKey, publicKey: fromHex(v.pkRm), enc: fromHex(v.enc), ciphertext: fromHex(v.ct), info: fromHex(v.info), aad: fromHex(v.aad), aead: v.aead,
    });
    assert.equal(toHex(plaintext), v.pt);
  });

  test(`seals ${v.name} with its ephemeral key to the same bytes`, async () => {
    const ephemeral = {
      privateKey: await importX25519PrivateKey(fromHex(v.skEm)),
      publicKey: await crypto.subtle.importKey("raw", fromHex(v.enc), { name: "X25519" }, true, []),
    };
    const box = await sealSingleShot({ publicKey: fromHex(v.pkRm), plaintext: fromHex(v.pt), info: fromHex(v.info), aad: fromHex(v.aad), aead: v.aead, ephemeral });
    assert.equal(toHex(box.enc), v.enc);
    assert.equal(toHex(box.ciphertext), v.ct);
  });
}

test("a box opens only with its key, its info and unaltered", async () => {
  const pair = await crypto.subtle.generateKey({ name: "X25519" }, false, ["deriveBits"]);
  const other = await crypto.subtle.generateKey({ name: "X25519" }, false, ["deriveBits"]);
  const publicKey = new Uint8Array(await crypto.subtle.exportKey("raw", pair.publicKey));
  const info = utf8("coplay successor v1");
  const box = await sealSingleShot({ publicKey, plaintext: utf8("coplay://127.0.0.1:1/x#y"), info });
  const open = (changes) => openSingleShot({ privateKey: pair.privateKey, publicKey, enc: box.enc, ciphertext: box.ciphertext, info, ...changes });
  assert.equal(new TextDecoder().decode(await open({})), "coplay://127.0.0.1:1/x#y");
  await assert.rejects(open({ privateKey: other.privateKey }), HPKEError);
  await assert.rejects(open({ info: utf8("coplay successor v2") }), HPKEError);
  const altered = box.ciphertext.slice();
  altered[0] ^= 1;
  await assert.rejects(open({ ciphertext: altered }), HPKEError);
  const enc = box.enc.slice();
  enc[5] ^= 1;
  await assert.rejects(open({ enc }), HPKEError);
  await assert.rejects(open({ enc: box.enc.slice(0, 31) }), HPKEError);
});
