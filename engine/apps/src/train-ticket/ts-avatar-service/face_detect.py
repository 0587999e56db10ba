"""Face detection and cropping for ts-avatar-service (OpenCV Haar cascade)."""

import cv2

CASCADE_PATH = cv2.data.haarcascades + "haarcascade_frontalface_default.xml"
_cascade = cv2.CascadeClassifier(CASCADE_PATH)

# Detector settings: each pyramid step shrinks the image by 10 %; a face must be found
# by 5 neighbouring windows and be at least 48 px wide.
SCALE_FACTOR = 1.1
MIN_NEIGHBORS = 5
MIN_FACE_PX = 48

# The avatar keeps some hair and chin around the detected box.
MARGIN = 0.25


class FaceNotFound(Exception):
    """No face, or more than one face, in the uploaded photo."""


def detect_faces(image):
    """Return face boxes (x, y, w, h), largest first."""
    gray = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    gray = cv2.equalizeHist(gray)
    faces = _cascade.detectMultiScale(
        gray,
        scaleFactor=SCALE_FACTOR,
        minNeighbors=MIN_NEIGHBORS,
        minSize=(MIN_FACE_PX, MIN_FACE_PX),
    )
    return sorted((tuple(int(v) for v in f) for f in faces), key=lambda f: f[2] * f[3], reverse=True)


def square_box(box, width, height, margin=MARGIN):
    """Grow a face box by `margin` on every side, make it square, keep it in the image."""
    x, y, w, h = box
    side = int(max(w, h) * (1 + 2 * margin))
    side = min(side, width, height)
    cx, cy = x + w // 2, y + h // 2
    left = min(max(cx - side // 2, 0), width - side)
    top = min(max(cy - side // 2, 0), height - side)
    return left, top, side


def crop_face(image, size):
    """Crop the single face in `image` into a `size` x `size` square.

    Raises:
        FaceNotFound: zero faces, or two faces of similar size (a group photo).
    """
    faces = detect_faces(image)
    if not faces:
        raise FaceNotFound("no face found in the image")
    if len(faces) > 1:
        first, second = faces[0], faces[1]
        if second[2] * second[3] > 0.5 * first[2] * first[3]:
            raise FaceNotFound("more than one face in the image")
    height, width = image.shape[:2]
    left, top, side = square_box(faces[0], width, height)
    crop = image[top:top + side, left:left + side]
    return cv2.resize(crop, (size, size), interpolation=cv2.INTER_AREA)
