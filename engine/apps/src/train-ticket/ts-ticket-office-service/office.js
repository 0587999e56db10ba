/*
 * MongoDB access for ticket offices. One document per (province, city, region) holds
 * the offices of that region in an `offices` array; office names are unique per region.
 */
var MongoClient = require('mongodb').MongoClient;

var COLLECTION = 'office';
var MAX_WINDOWS = 50;
// "08:00-18:00": opening and closing time, 24 h clock
var WORK_TIME = /^([01]\d|2[0-3]):[0-5]\d-([01]\d|2[0-3]):[0-5]\d$/;

var db = null;

function connect(url, callback) {
    MongoClient.connect(url, { poolSize: 10, connectTimeoutMS: 5000 }, function (err, client) {
        if (err) {
            callback(err);
            return;
        }
        db = client.db();
        db.collection(COLLECTION).createIndex({ province: 1, city: 1, region: 1 }, { unique: true }, callback);
    });
}

function httpError(status, message) {
    var err = new Error(message);
    err.status = status;
    return err;
}

function validateOffice(o) {
    if (!o || !o.officeName) {
        return 'officeName is required';
    }
    if (o.workTime && !WORK_TIME.test(o.workTime)) {
        return 'workTime must look like 08:00-18:00';
    }
    if (o.workTime) {
        var parts = o.workTime.split('-');
        if (parts[0] >= parts[1]) {
            return 'an office must close after it opens';
        }
    }
    var windows = parseInt(o.windowNum, 10);
    if (isNaN(windows) || windows < 1 || windows > MAX_WINDOWS) {
        return 'windowNum must be 1..' + MAX_WINDOWS;
    }
    return null;
}

function getAll(callback) {
    db.collection(COLLECTION).find({}).sort({ province: 1, city: 1, region: 1 }).toArray(callback);
}

function getSpecificOffices(province, city, region, callback) {
    db.collection(COLLECTION).find({ province: province, city: city, region: region }).toArray(callback);
}

function addOffice(province, city, region, office, callback) {
    var key = { province: province, city: city, region: region };
    db.collection(COLLECTION).findOne(key, function (err, doc) {
        if (err) {
            callback(err);
            return;
        }
        var offices = doc ? doc.offices || [] : [];
        for (var i = 0; i < offices.length; i++) {
            if (offices[i].officeName === office.officeName) {
                callback(httpError(409, 'an office with this name exists in the region'));
                return;
            }
        }
        office.windowNum = parseInt(office.windowNum, 10);
        db.collection(COLLECTION).updateOne(key, { $push: { offices: office } }, { upsert: true }, function (err2) {
            callback(err2, err2 ? null : { status: 1, msg: 'office added' });
        });
    });
}

function deleteOffice(province, city, region, officeName, callback) {
    var key = { province: province, city: city, region: region };
    db.collection(COLLECTION).updateOne(key, { $pull: { offices: { officeName: officeName } } }, function (err, r) {
        if (err) {
            callback(err);
            return;
        }
        if (r.modifiedCount === 0) {
            callback(httpError(404, 'no such office'));
            return;
        }
        callback(null, { status: 1, msg: 'office deleted' });
    });
}

module.exports = {
    connect: connect,
    validateOffice: validateOffice,
    getAll: getAll,
    getSpecificOffices: getSpecificOffices,
    addOffice: addOffice,
    deleteOffice: deleteOffice
};
