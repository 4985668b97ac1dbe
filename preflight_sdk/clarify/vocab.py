"""The deterministic engine's knowledge: topics, their keywords and questions, and the vocabulary.

Everything here is data. Terms are matched on word boundaries (see `text.find_terms`), never as
substrings. A topic groups the keywords that reveal it, the questions that settle it and the
folder names where its code usually lives. The vocabulary maps a term of an intention ("Clerk",
"postgres") to the answer it gives ("auth_library" = "Clerk").
"""

from __future__ import annotations

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

# question id, the value it gives = the terms that state it (matched on word boundaries).
_VOCABULARY_TABLE = """
auth_strategy      OAuth                  = oauth, oauth2
auth_strategy      JWT                    = jwt
auth_strategy      Magic Links            = magic link
auth_strategy      Email/Password         = email/password, email and password, email password
auth_strategy      SAML                   = saml
auth_strategy      SSO                    = sso
auth_strategy      Passkeys               = passkey
auth_strategy      Passwordless           = passwordless
auth_library       Clerk                  = clerk
auth_library       Auth0                  = auth0
auth_library       NextAuth.js            = nextauth, next-auth, next auth, nextauth.js
auth_library       Auth.js                = auth.js
auth_library       Passport.js            = passport.js, passport
auth_library       Lucia                  = lucia
auth_library       Keycloak               = keycloak
auth_library       Authlib                = authlib
auth_library       FastAPI Users          = fastapi users
auth_library       Django allauth         = django allauth
auth_library       Supabase Auth          = supabase auth
auth_library       Firebase Auth          = firebase auth
auth_library       Amazon Cognito         = cognito
db_type            PostgreSQL             = postgres, postgresql
db_type            MySQL                  = mysql
db_type            MariaDB                = mariadb
db_type            MongoDB                = mongodb, mongo
db_type            SQLite                 = sqlite
db_type            DynamoDB               = dynamodb
db_type            CockroachDB            = cockroachdb
db_type            Supabase               = supabase
db_type            PlanetScale            = planetscale
db_orm             Prisma                 = prisma
db_orm             Drizzle                = drizzle
db_orm             TypeORM                = typeorm
db_orm             Sequelize              = sequelize
db_orm             SQLAlchemy             = sqlalchemy
db_orm             SQLModel               = sqlmodel
db_orm             Django ORM             = django orm
db_orm             Knex                   = knex
db_orm             Kysely                 = kysely
db_orm             Mongoose               = mongoose
frontend_framework React                  = react
frontend_framework Next.js                = next.js, nextjs
frontend_framework Vue                    = vue, vue.js
frontend_framework Nuxt                   = nuxt
frontend_framework Svelte                 = svelte
frontend_framework SvelteKit              = sveltekit
frontend_framework Angular                = angular
frontend_framework Remix                  = remix
frontend_framework Astro                  = astro
frontend_framework SolidJS                = solidjs
styling            Tailwind CSS           = tailwind, tailwindcss, tailwind css
styling            CSS Modules            = css modules
styling            Styled Components      = styled-components, styled components
styling            Sass                   = sass, scss
styling            Emotion                = emotion
backend_framework  FastAPI                = fastapi
backend_framework  Django                 = django
backend_framework  Flask                  = flask
backend_framework  Express                = express.js, expressjs
backend_framework  NestJS                 = nestjs
backend_framework  Fastify                = fastify
backend_framework  Spring Boot            = spring boot
backend_framework  Rails                  = rails
backend_framework  Laravel                = laravel
backend_framework  Hono                   = hono
api_style          REST                   = rest api, restful
api_style          GraphQL                = graphql
api_style          gRPC                   = grpc
api_style          tRPC                   = trpc
hosting            Vercel                 = vercel
hosting            Netlify                = netlify
hosting            Fly.io                 = fly.io
hosting            Heroku                 = heroku
hosting            AWS                    = aws
hosting            GCP                    = gcp, google cloud
hosting            Azure                  = azure
hosting            Cloud Run              = cloud run
ci_cd              GitHub Actions         = github actions
ci_cd              GitLab CI              = gitlab ci
ci_cd              CircleCI               = circleci
ci_cd              Jenkins                = jenkins
caching            Redis                  = redis
caching            Memcached              = memcached
caching            Varnish                = varnish
observability      OpenTelemetry          = opentelemetry
observability      Prometheus + Grafana   = prometheus, grafana
observability      Datadog                = datadog
observability      Sentry                 = sentry
message_broker     RabbitMQ               = rabbitmq
message_broker     Kafka                  = kafka
message_broker     Redis Streams          = redis streams
message_broker     Amazon SQS             = sqs
message_broker     NATS                   = nats
message_broker     BullMQ                 = bullmq
file_storage       Amazon S3              = s3
file_storage       Google Cloud Storage   = google cloud storage
file_storage       Azure Blob Storage     = azure blob
file_storage       MinIO                  = minio
"""


def _vocabulary() -> tuple[tuple[str, str, str], ...]:
    rows = []
    for line in _VOCABULARY_TABLE.strip().splitlines():
        head, terms = line.split(" = ")
        qid, value = head.split(maxsplit=1)
        rows += [(term.strip(), qid, value.strip()) for term in terms.split(",")]
    return tuple(rows)


VOCABULARY: tuple[tuple[str, str, str], ...] = _vocabulary()
