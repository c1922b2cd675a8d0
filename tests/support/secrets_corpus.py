"""Realistic secrets (one per provider format) inside realistic text, for the privacy tests of several folders."""

from __future__ import annotations

import base64
import json
import random
import string

ALNUM = string.ascii_letters + string.digits
_rng = random.Random(20261122)


def _body(n: int, alphabet: str = ALNUM) -> str:
    """A random-looking (deterministic) body with at least 2 digits, 2 upper- and 2 lower-case letters."""
    while True:
        s = "".join(_rng.choice(alphabet) for _ in range(n))
        if (
            n < 8
            or not (set(alphabet) >= set("aA0"))
            or (
                sum(c.isdigit() for c in s) >= 2
                and sum(c.isupper() for c in s) >= 2
                and sum(c.islower() for c in s) >= 2
            )
        ):
            return s


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _corpus() -> list[tuple[str, str, str]]:
    """(kind, secret, text holding it): realistic fake secrets with the real prefixes and lengths."""
    upper = string.ascii_uppercase + string.digits
    jwt = ".".join(
        [
            _b64url(b'{"alg":"HS256","typ":"JWT"}'),
            _b64url(json.dumps({"sub": _body(12), "name": "Dev Ops", "iat": 1767225600}).encode()),
            _body(43, ALNUM + "_-"),
        ]
    )
    key_lines = [_body(70, ALNUM + "+/") for _ in range(3)]
    private_key = "-----BEGIN OPENSSH PRIVATE KEY-----\n" + "\n".join(key_lines) + "\n-----END OPENSSH PRIVATE KEY-----"
    slack_hook = _body(24)
    basic = base64.b64encode(f"deploy:{_body(10)}".encode()).decode()
    items = [
        ("openai", s := "sk-" + _body(48), f"export OPENAI_API_KEY={s}"),
        ("openai", s := "sk-proj-" + _body(120, ALNUM + "_-"), f"the project key is {s} for prod"),
        ("anthropic", s := "sk-ant-api03-" + _body(93, ALNUM + "_-") + "AA", f"ANTHROPIC_API_KEY='{s}'"),
        ("groq", s := "gsk_" + _body(52), f"groq client uses {s}"),
        ("google", s := "AIza" + _body(35, ALNUM + "_-"), f"maps key {s} restricted to referrers"),
        ("google", s := "ya29." + _body(60, ALNUM + "_-"), f"oauth access token {s} expires hourly"),
        ("github", s := "ghp_" + _body(36), f"git clone https://{s}@github.com/acme/app.git"),
        ("github", s := "github_pat_" + _body(22) + "_" + _body(59), f"CI uses {s} to push tags"),
        ("github", s := "gho_" + _body(36), f"oauth app token {s}"),
        ("gitlab", s := "glpat-" + _body(20, ALNUM + "_-"), f"gitlab token {s} (api scope)"),
        ("slack", s := f"xoxb-{_body(12, string.digits)}-{_body(13, string.digits)}-{_body(24)}", f"bot {s}"),
        ("slack", slack_hook, f"alerts go to https://hooks.slack.com/services/T0ABC1DEF/B0GHI2JKL/{slack_hook}"),
        ("stripe", s := "sk_live_" + _body(24), f"stripe.api_key = {s}"),
        ("stripe", s := "rk_test_" + _body(24), f"restricted {s} in staging"),
        ("aws", s := "AKIA" + _body(16, upper), f"aws access key id {s}"),
        ("aws", s := _body(40, ALNUM + "/+"), f"aws_secret_access_key = {s}"),
        ("npm", s := "npm_" + _body(36), f"//registry.npmjs.org/:_authToken={s}"),
        ("pypi", s := "pypi-AgEIcHlwaS5vcmc" + _body(60, ALNUM + "_-"), f"twine upload with password {s}"),
        ("huggingface", s := "hf_" + _body(34), f"HF token {s} read-only"),
        ("jwt", jwt, f"session cookie was {jwt} when it failed"),
        ("private_key", key_lines[0], f"deploy key:\n{private_key}\nend"),
        ("private_key", key_lines[1], f"deploy key:\n{private_key}\nend"),
        ("bearer", s := _body(20), f"curl -H 'Authorization: Bearer {s}' https://api.example.com"),
        ("authorization", basic, f'headers = {{"Authorization": "Basic {basic}"}}'),
        ("url_password", s := _body(14), f"DATABASE_URL=postgres://app_user:{s}@db.internal:5432/app"),
        ("url_password", s := _body(12), f"push to https://deploy:{s}@git.example.com/repo.git"),
        ("secret", s := _body(12), f"DB_PASSWORD={s}"),
        ("secret", s := _body(16), f"client_secret: {s}"),
        ("secret", s := _body(18), f'{{"apiKey": "{s}", "region": "eu-west-1"}}'),
        ("secret", s := _body(20), f"SECRET_KEY = '{s}'"),
        ("secret", s := "correct-horse-" + _body(6, string.ascii_lowercase) + "-staple", f"passphrase={s}"),
        ("high_entropy", s := _body(44, ALNUM + "+/"), f"the signing blob is {s} in vault"),
        # short prose forms, named by nothing but the word before them
        ("secret", s := _body(12), f"pass: {s}"),
        ("secret", s := _body(12), f"login with admin / {s}"),
        ("secret", s := _body(14), f"the password for prod is in 1password, it is {s}"),
        ("secret", s := _body(10), f"pwd {s}"),
        ("private", s := "PRIVSPAN" + _body(10), f"Public part. <private>{s} internal host</private> Still public."),
        ("private", s := "NESTED" + _body(10), f"a <private>x <PRIVATE>{s}</private> y</private> b"),
        ("private", s := "UNCLOSED" + _body(10), f"keep this line\n<private>\nrest {s} gone"),
    ]
    return items


CORPUS = _corpus()
SECRETS = [secret for _, secret, _ in CORPUS]
