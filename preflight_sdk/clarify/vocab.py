"""The deterministic engine's knowledge: topics, their keywords and questions, and the vocabulary.

Everything here is data. Terms are matched on word boundaries (see `text.find_terms`), never as
substrings. A topic groups the keywords that reveal it, the questions that settle it and the
folder names where its code usually lives. The vocabulary maps a term of an intention ("Clerk",
"postgres") to the answer it gives ("auth_library" = "Clerk").
"""

from __future__ import annotations

from importlib import resources
from typing import Literal

import msgspec

__all__ = [
    "CHANGE_VERBS",
    "EXPLICIT",
    "MIGRATION",
    "NON_TRIGGERS",
    "OTHER",
    "SPECS",
    "STRUCTURAL_WORDS",
    "TOPICS",
    "VOCABULARY",
    "Spec",
    "Topic",
]

OTHER = "Other (specify)"
QuestionType = Literal["single_choice", "multi_choice", "free_text"]


class Spec(msgspec.Struct, frozen=True, kw_only=True):
    """A question the engine can ask.

    `variants` picks the options from repository signals (first matching signal wins, else
    `options`). `target` is the snapshot (category, field) the answer sets; questions without
    one feed the task only. `paths` marks a free-text answer that lists repository paths.
    """

    id: str
    kind: QuestionType
    text: str
    label: str
    options: tuple[str, ...] = ()
    variants: tuple[tuple[str, tuple[str, ...]], ...] = ()
    target: tuple[str, str] | None = None
    optional: bool = False
    min_selections: int | None = None
    max_selections: int | None = None
    allow_other: bool = True
    paths: bool = False


class Topic(msgspec.Struct, frozen=True, kw_only=True):
    """An area an intention can be about: its keywords, questions and usual folder names."""

    name: str
    category: str
    keywords: tuple[str, ...]
    questions: tuple[str, ...]
    folders: tuple[str, ...]


# fmt: off
_SPECS = (
    Spec(id="auth_strategy", kind="single_choice", label="Authentication strategy",
         text="Which authentication strategy should the project use?",
         options=("OAuth", "Email/Password", "Magic Links", "SAML"), target=("Authentication", "Strategy")),
    Spec(id="auth_library", kind="single_choice", label="Authentication library",
         text="Which authentication library or service?",
         options=("NextAuth.js", "Passport.js", "Auth0", "Clerk", "Custom"),
         variants=(("nextjs", ("NextAuth.js", "Clerk", "Auth0", "Custom")),
                   ("python", ("Authlib", "FastAPI Users", "Django allauth", "Auth0", "Custom")),
                   ("node", ("Passport.js", "NextAuth.js", "Auth0", "Clerk", "Custom"))),
         target=("Authentication", "Library")),
    Spec(id="oauth_providers", kind="multi_choice", label="OAuth providers",
         text="If users sign in with OAuth: which providers? (skip otherwise)",
         options=("Google", "GitHub", "Microsoft", "Apple"), optional=True,
         min_selections=1, max_selections=5),
    Spec(id="db_type", kind="single_choice", label="Database", text="Which database?",
         options=("PostgreSQL", "MySQL", "SQLite", "MongoDB"), target=("Database", "Type")),
    Spec(id="db_orm", kind="single_choice", label="ORM", text="Which ORM or query layer?",
         options=("Prisma", "TypeORM", "Drizzle", "SQLAlchemy", "None"),
         variants=(("python", ("SQLAlchemy", "SQLModel", "Django ORM", "None")),
                   ("typescript", ("Prisma", "Drizzle", "TypeORM", "None")),
                   ("node", ("Prisma", "Drizzle", "TypeORM", "None"))),
         target=("Database", "ORM")),
    Spec(id="frontend_framework", kind="single_choice", label="Frontend framework",
         text="Which frontend framework?",
         options=("React", "Vue", "Svelte", "Angular"), target=("Frontend", "Framework")),
    Spec(id="styling", kind="single_choice", label="Styling", text="Which styling approach?",
         options=("Tailwind CSS", "CSS Modules", "Styled Components", "Plain CSS"),
         target=("Frontend", "Styling")),
    Spec(id="api_style", kind="single_choice", label="API style", text="Which API style?",
         options=("REST", "GraphQL", "gRPC", "tRPC"), target=("Backend", "API_Style")),
    Spec(id="backend_framework", kind="single_choice", label="Backend framework",
         text="Which backend framework?",
         options=("FastAPI", "Django", "Express", "NestJS", "Spring Boot"),
         variants=(("python", ("FastAPI", "Django", "Flask")), ("node", ("Express", "NestJS", "Fastify")),
                   ("go", ("Gin", "Echo", "net/http")), ("java", ("Spring Boot", "Quarkus"))),
         target=("Backend", "Framework")),
    Spec(id="hosting", kind="single_choice", label="Hosting", text="Where will it be hosted?",
         options=("AWS", "GCP", "Azure", "Vercel", "Self-hosted"), target=("Infra", "Hosting")),
    Spec(id="ci_cd", kind="single_choice", label="CI/CD", text="Which CI/CD system?",
         options=("GitHub Actions", "GitLab CI", "CircleCI", "Jenkins"), target=("Infra", "CI_CD")),
    Spec(id="caching", kind="single_choice", label="Cache", text="Which cache?",
         options=("Redis", "Memcached", "In-process memory", "CDN"), target=("Infra", "Caching")),
    Spec(id="observability", kind="single_choice", label="Observability", text="Which observability stack?",
         options=("OpenTelemetry", "Prometheus + Grafana", "Datadog", "Sentry"),
         target=("Infra", "Observability")),
    Spec(id="message_broker", kind="single_choice", label="Message broker",
         text="Which message broker or queue?",
         options=("RabbitMQ", "Kafka", "Redis Streams", "Amazon SQS", "NATS"), target=("Other", "Messaging")),
    Spec(id="file_storage", kind="single_choice", label="File storage", text="Where will files be stored?",
         options=("Amazon S3", "Google Cloud Storage", "Azure Blob Storage", "Local disk"),
         target=("Other", "File_Storage")),
    Spec(id="category", kind="single_choice", label="Area",
         text="Which part of the system does this change belong to?",
         options=("Frontend", "Backend", "Database", "Authentication", "Infra")),
    Spec(id="description", kind="free_text", label="Approach",
         text="Describe the technical approach in one or two sentences."),
    Spec(id="allowlist_paths", kind="free_text", label="Allowed paths", optional=True, paths=True,
         text="Which files or folders may this change touch? (comma-separated, relative to the repository)"),
    Spec(id="acceptance_criteria", kind="free_text", label="Acceptance criteria", optional=True,
         text="How will we know it is done? (one criterion per line)"),
)
SPECS: dict[str, Spec] = {spec.id: spec for spec in _SPECS}

# Each topic: its keywords, the questions that settle it, the folder names where its code lives.
TOPICS: tuple[Topic, ...] = (
    Topic(name="authentication", category="Authentication",
          keywords=("auth", "authentication", "authenticate", "login", "log in", "logout", "sign in",
                    "signin", "sign up", "signup", "oauth", "oauth2", "jwt", "password", "sso", "saml",
                    "2fa", "mfa", "session", "passkey"),
          questions=("auth_strategy", "auth_library", "oauth_providers"),
          folders=("auth", "authentication", "login", "session", "user", "account", "identity")),
    Topic(name="database", category="Database",
          keywords=("database", "db", "sql", "postgres", "postgresql", "mysql", "mariadb", "mongo",
                    "mongodb", "sqlite", "orm", "persistence", "data model"),
          questions=("db_type", "db_orm"),
          folders=("db", "database", "model", "migration", "schema", "repository")),
    Topic(name="frontend", category="Frontend",
          keywords=("ui", "frontend", "front end", "react", "vue", "angular", "svelte", "component", "css",
                    "styling", "stylesheet", "tailwind"),
          questions=("frontend_framework", "styling"),
          folders=("component", "page", "view", "ui", "frontend", "web", "client", "style")),
    Topic(name="backend", category="Backend",
          keywords=("api", "endpoint", "backend", "back end", "server", "graphql", "grpc", "trpc", "webhook",
                    "microservice", "rest api"),
          questions=("api_style", "backend_framework"),
          folders=("api", "server", "route", "controller", "handler", "backend", "service")),
    Topic(name="hosting", category="Infra",
          keywords=("deploy", "deployment", "hosting", "infrastructure", "infra", "kubernetes", "k8s",
                    "terraform", "cloud"),
          questions=("hosting",), folders=("infra", "deploy", "deployment", "k8s", "terraform", "helm")),
    Topic(name="ci", category="Infra",
          keywords=("ci", "cd", "ci/cd", "pipeline", "continuous integration", "continuous delivery"),
          questions=("ci_cd",), folders=("ci",)),
    Topic(name="caching", category="Infra", keywords=("cache", "caching", "cdn"),
          questions=("caching",), folders=("cache",)),
    Topic(name="observability", category="Infra",
          keywords=("monitoring", "observability", "tracing", "telemetry", "alerting", "metrics"),
          questions=("observability",), folders=("monitoring", "observability", "telemetry")),
    Topic(name="messaging", category="Other",
          keywords=("queue", "message queue", "messaging", "message broker", "pub/sub", "pubsub",
                    "event bus"),
          questions=("message_broker",), folders=("queue", "worker", "job", "event", "messaging")),
    Topic(name="storage", category="Other",
          keywords=("storage", "file storage", "object storage", "blob", "upload"),
          questions=("file_storage",), folders=("storage", "upload", "file")),
)

# Seed heuristics: these words make a change architectural even when it is also a fix.
EXPLICIT = ("architecture", "architectural", "strategy", "approach", "design decision", "adr",
            "decision record")
MIGRATION = ("migrate to", "migrating to", "migration to", "move to", "moving to", "switch to",
             "switching to", "migrate from", "migrating from", "move from", "moving from", "switch from",
             "switching from", "cross-cutting", "across the codebase", "across all services")
# Category words of the seed that name no topic of their own.
STRUCTURAL_WORDS = ("framework", "runtime")
NON_TRIGGERS = ("fix", "bugfix", "hotfix", "bug", "typo", "refactor", "refactoring", "rename", "cleanup",
                "clean up", "tidy", "lint", "reformat", "config", "configuration", "setting", "provider",
                "env var", "environment variable")
CHANGE_VERBS = ("add", "adding", "introduce", "adopt", "use", "using", "integrate", "install", "migrate",
                "move", "switch", "replace")
# fmt: on


def _vocabulary() -> tuple[tuple[str, str, str], ...]:
    """The rows of `vocabulary.txt` as (term, question id, value), one per term."""
    text = resources.files(__package__).joinpath("vocabulary.txt").read_text(encoding="utf-8")
    rows = []
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        head, terms = line.split(" = ")
        qid, value = head.split(maxsplit=1)
        rows += [(term.strip(), qid, value.strip()) for term in terms.split(",")]
    return tuple(rows)


VOCABULARY: tuple[tuple[str, str, str], ...] = _vocabulary()
