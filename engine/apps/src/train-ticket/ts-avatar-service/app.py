"""ts-avatar-service: turns an uploaded photo into a square face avatar.

POST /api/v1/avatar with JSON {"img": "<base64 JPEG or PNG>"} and a Bearer JWT issued by
ts-auth-service. Answers {"img": "<base64 PNG, 128x128>"} or {"msg": ...} with 400/401.
"""

import base64
import binascii
import json
import os
from datetime import datetime, timezone

import cv2
import jwt
import numpy as np
from flask import Flask, jsonify, request

from face_detect import FaceNotFound, crop_face

app = Flask(__name__)

JWT_SECRET = os.environ.get("JWT_SECRET", "secret")
JWT_ALG = "HS256"

# Upload limits: the UI scales photos down before sending them.
MAX_IMAGE_BYTES = 2 * 1024 * 1024
MIN_SIDE_PX = 64
AVATAR_SIDE_PX = 128


def user_id_from_token(req):
    """Return the user id claim of a valid, unexpired Bearer token, else None."""
    header = req.headers.get("Authorization", "")
    if not header.startswith("Bearer "):
        return None
    try:
        claims = jwt.decode(header[len("Bearer "):], JWT_SECRET, algorithms=[JWT_ALG])
    except jwt.PyJWTError:
        return None
    exp = claims.get("exp")
    if exp is not None and datetime.fromtimestamp(exp, tz=timezone.utc) < datetime.now(tz=timezone.utc):
        return None
    return claims.get("id")


def decode_image(image_b64):
    """Decode a base64 image (optionally a data: URL) into a BGR array.

    Raises:
        ValueError: not base64, too large, not an image, or smaller than MIN_SIDE_PX.
    """
    if image_b64.startswith("data:"):
        image_b64 = image_b64.split(",", 1)[1]
    try:
        raw = base64.b64decode(image_b64, validate=True)
    except (binascii.Error, ValueError):
        raise ValueError("img is not valid base64")
    if len(raw) > MAX_IMAGE_BYTES:
        raise ValueError("image larger than %d bytes" % MAX_IMAGE_BYTES)
    image = cv2.imdecode(np.frombuffer(raw, np.uint8), cv2.IMREAD_COLOR)
    if image is None:
        raise ValueError("img is not a JPEG or PNG image")
    height, width = image.shape[:2]
    if min(height, width) < MIN_SIDE_PX:
        raise ValueError("image smaller than %dx%d" % (MIN_SIDE_PX, MIN_SIDE_PX))
    return image


def encode_png(image):
    ok, buf = cv2.imencode(".png", image)
    if not ok:
        raise RuntimeError("PNG encoding failed")
    return base64.b64encode(buf.tobytes()).decode("ascii")


@app.route("/api/v1/avatar", methods=["POST"])
def upload_avatar():
    user_id = user_id_from_token(request)
    if user_id is None:
        return jsonify({"msg": "Invalid or missing token"}), 401
    try:
        body = json.loads(request.get_data().decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return jsonify({"msg": "request body is not JSON"}), 400
    image_b64 = body.get("img")
    if not image_b64:
        return jsonify({"msg": "need img in request body"}), 400
    try:
        image = decode_image(image_b64)
        face = crop_face(image, AVATAR_SIDE_PX)
    except ValueError as exc:
        return jsonify({"msg": str(exc)}), 400
    except FaceNotFound as exc:
        return jsonify({"msg": str(exc)}), 400
    app.logger.info("avatar for user %s: %dx%d input", user_id, image.shape[1], image.shape[0])
    return jsonify({"img": encode_png(face)}), 200


@app.route("/api/v1/avatar/welcome", methods=["GET"])
def welcome():
    return "Welcome to [ Avatar Service ] !"


if __name__ == "__main__":
    app.run(host="0.0.0.0", port=17001)
