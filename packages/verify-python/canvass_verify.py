"""Verify the signatures of Canvass webhook deliveries (X-Service-Signature).

One file, Python 3.8+ standard library only: copy it next to your code.

    from canvass_verify import verify_signature, WebhookVerificationError

    try:
        verify_signature(secret, request.headers.get("X-Service-Signature"), raw_body)
    except WebhookVerificationError as e:
        return e.reason, 400

The header is ``t=<ms>,v1=<hex>[,v1=<hex>...]``: each v1 is the lowercase hex HMAC-SHA256, keyed
with the secret's UTF-8 bytes, of ``<t>.`` followed by the raw body; any matching v1 is enough.
"""

import hashlib
import hmac
import math
import re
import time

__all__ = ["verify_signature", "WebhookVerificationError", "DEFAULT_TOLERANCE_MS", "REASONS"]

DEFAULT_TOLERANCE_MS = 300_000
REASONS = ("missing_header", "malformed_header", "timestamp_out_of_tolerance", "signature_mismatch")

# ASCII digits only: Python's \d would also take other scripts' digits.
_T = re.compile(r"[0-9]{1,16}")
# What JavaScript's String.prototype.trim removes, so both verifiers split a header alike.
_WHITESPACE = "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"


class WebhookVerificationError(Exception):
    """Raised by verify_signature; ``reason`` is one of REASONS."""

    def __init__(self, reason):
        super().__init__("webhook signature verification failed: " + reason)
        self.reason = reason


def verify_signature(secret, header, raw_body, tolerance_ms=DEFAULT_TOLERANCE_MS, now_ms=None):
    """Returns None when the signature holds; raises WebhookVerificationError otherwise.

    secret: the account signing secret (whsec_...), str or bytes.
    header: the X-Service-Signature value (str, bytes, a list of values, or None).
    raw_body: the request body exactly as received, bytes or str (str is taken as UTF-8);
        never JSON parsed and serialised again.
    tolerance_ms: largest allowed |now - t|; it bounds how long a captured request can be replayed.
    now_ms: the current time in milliseconds since the epoch (for tests); the clock by default.
    """
    # Misuse, not a bad request: a missing secret or a parsed body would otherwise fail every delivery.
    if isinstance(secret, str):
        secret = secret.encode("utf-8")
    if not isinstance(secret, (bytes, bytearray)) or not secret:
        raise TypeError("secret must be the signing secret (whsec_...)")
    if isinstance(raw_body, str):
        try:
            raw_body = raw_body.encode("utf-8")
        except UnicodeEncodeError as e:
            raise TypeError("raw_body must be the request body as received: this str holds no UTF-8 text") from e
    if not isinstance(raw_body, (bytes, bytearray, memoryview)):
        raise TypeError("raw_body must be the request body as received (bytes or str), not parsed JSON")
    if not tolerance_ms >= 0:
        raise ValueError("tolerance_ms must be a number of milliseconds >= 0")
    if now_ms is None:
        now_ms = time.time_ns() // 1_000_000
    # A time that is no number would pass every timestamp (nan compares false), so it is refused.
    if isinstance(now_ms, bool) or not isinstance(now_ms, (int, float)) or not math.isfinite(now_ms):
        raise ValueError("now_ms must be a finite number of milliseconds")

    if isinstance(header, (list, tuple)):
        header = ",".join(bytes(h).decode("latin-1") if isinstance(h, (bytes, bytearray)) else h for h in header)
    elif isinstance(header, (bytes, bytearray)):
        header = bytes(header).decode("latin-1")
    if header is not None and not isinstance(header, str):
        raise TypeError("header must be the X-Service-Signature header value (str, bytes, or a list of them)")
    if not header:
        raise WebhookVerificationError("missing_header")
    t = None
    ts = 0
    v1 = []
    for part in header.split(","):
        key, eq, value = part.partition("=")
        if not eq:
            continue
        key = key.strip(_WHITESPACE)
        value = value.strip(_WHITESPACE)
        if key == "t":
            t = value
            ts += 1
        elif key == "v1":
            v1.append(value)
    # One t: verifiers that kept the first or the last of several would disagree.
    if t is None or ts > 1 or not _T.fullmatch(t) or not v1:
        raise WebhookVerificationError("malformed_header")
    if abs(now_ms - int(t)) > tolerance_ms:
        raise WebhookVerificationError("timestamp_out_of_tolerance")

    # The signed text is <t>.<body> with t exactly as the header carries it: one signature
    # verifies under one header only.
    mac = hmac.new(bytes(secret), t.encode("ascii") + b".", hashlib.sha256)
    mac.update(raw_body)
    expected = mac.hexdigest().encode("ascii")
    for candidate in v1:
        given = candidate.encode("utf-8", "surrogatepass")
        # Length first, as the JavaScript verifier does; compare_digest is constant-time.
        if len(given) == len(expected) and hmac.compare_digest(given, expected):
            return None
    raise WebhookVerificationError("signature_mismatch")
