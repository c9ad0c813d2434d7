"""server: `whileai-train serve`, the runs API and the dashboard over the local store.

    app.py          the ASGI app under uvicorn: the API routes, the dashboard page, the vendored assets
    api.py          the runs API as plain operations over the store (validation and refusals, one place)
    models.py       the API's request and response bodies (pydantic; /openapi.json is built from them)
    body.py         a request body read as JSON without trusting it (every fault an ApiError naming the field)
    guard.py        what every request passes first: host, origin, key, body limits
    connections.py  deadlines for headers and idle connections, and the cap on open connections
    sessions.py     the page's logins: a session token per typed key, wrong-key limits
    dashboard.py    the run page and the key form
    downloads.py    a run's points as a CSV or JSON download
    defaults.py     every default of serve, with its source
    static/         index.html, app.js, style.css and the vendored uPlot (with its license)
"""
