"""Runs canvass_verify over the shared test vectors (packages/verify/test-vectors.json, or the
path given), each body as str and as bytes; prints every disagreement and exits 1 if any."""

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from canvass_verify import REASONS, WebhookVerificationError, verify_signature  # noqa: E402


def verdict(vector, body):
    try:
        verify_signature(
            vector["secret"],
            vector["header"],
            body,
            tolerance_ms=vector["tolerance_ms"],
            now_ms=vector["now_ms"],
        )
    except WebhookVerificationError as e:
        if e.reason not in REASONS:
            return "unknown reason " + repr(e.reason)
        return e.reason
    except Exception as e:  # noqa: BLE001 - any other exception is a failure to report
        return "raised " + repr(e)
    return "ok"


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "verify", "test-vectors.json")
    with open(path, encoding="utf-8") as f:
        vectors = json.load(f)["vectors"]
    failures = 0
    for vector in vectors:
        for kind, body in (("str", vector["body"]), ("bytes", vector["body"].encode("utf-8"))):
            got = verdict(vector, body)
            if got != vector["expected"]:
                failures += 1
                print("FAIL %s (%s body): expected %s, got %s" % (vector["name"], kind, vector["expected"], got))
    print("%d vectors, %d failures" % (len(vectors), failures))
    return 1 if failures or not vectors else 0


if __name__ == "__main__":
    sys.exit(main())
