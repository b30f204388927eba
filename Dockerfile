# Production image for api, gateway, worker and beat (one image, four commands).
FROM node:20-bookworm-slim AS frontend
WORKDIR /src/frontend
COPY frontend/package.json frontend/package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY frontend/ ./
RUN npm run build

FROM python:3.11-slim-bookworm
ENV PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 TIERPILOT_ENVIRONMENT=production TIERPILOT_DATA_DIR=/var/lib/tierpilot
WORKDIR /app
COPY pyproject.toml README.md alembic.ini ./
COPY backend/ backend/
COPY worker/ worker/
COPY migrations/ migrations/
RUN pip install -e . && useradd --system --home /var/lib/tierpilot tierpilot \
    && mkdir -p /var/lib/tierpilot && chown tierpilot /var/lib/tierpilot
COPY --from=frontend /src/frontend/dist frontend/dist
USER tierpilot
EXPOSE 8000 9000
CMD ["tierpilot", "api", "--host", "0.0.0.0"]
